/// Noise's ChaCha20-Poly1305 nonce of a record counter (4 zero bytes, then the counter little-endian),
/// built on the stack so sealing and opening records allocate nothing.
enum RecordNonce {
    static func with<R, E: Error>(counter: UInt64, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var nonce: (UInt32, UInt32, UInt32) = (
            0, UInt32(truncatingIfNeeded: counter).littleEndian,
            UInt32(truncatingIfNeeded: counter >> 32).littleEndian
        )
        return try unsafe withUnsafeBytes(of: &nonce) { (raw) throws(E) -> R in try unsafe body(raw) }
    }
}
