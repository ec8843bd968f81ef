/// Hands any byte sequence to a raw-buffer consumer: in place when its storage is contiguous, through one
/// temporary array otherwise. The one bridge the streaming hashes use for `some Sequence<UInt8>`.
enum ContiguousBytes {
    static func with(_ bytes: some Sequence<UInt8>, _ body: (UnsafeRawBufferPointer) -> Void) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            unsafe body(UnsafeRawBufferPointer(buffer))
        }
        if done == nil {
            let array = Array(bytes)
            unsafe array.withUnsafeBytes { unsafe body($0) }
        }
    }
}
