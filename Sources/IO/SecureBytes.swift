/// Secret bytes in one allocation: wiped over their whole capacity when released, compared in
/// constant time, printed as `<redacted>`. The building block of every key type in Aether.
@safe public final class SecureBytes: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    // @unchecked: the storage is written only in init and never mutated afterwards.
    private let storage: UnsafeMutableRawBufferPointer

    /// Number of secret bytes.
    public var count: Int { unsafe storage.count }

    /// Copies `bytes` into fresh secret storage. The caller is responsible for wiping its own copy.
    public init(copying bytes: UnsafeRawBufferPointer) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        unsafe buffer.copyMemory(from: bytes)
        unsafe storage = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<bytes.count])
    }

    /// Copies `bytes` into fresh secret storage.
    public convenience init(copying bytes: some Sequence<UInt8>) {
        var array = Array(bytes)
        unsafe self.init(count: array.count) { out in
            unsafe array.withUnsafeBytes { unsafe out.copyMemory(from: $0) }
        }
        unsafe array.withUnsafeMutableBytes { unsafe Sodium.wipe($0) }
    }

    /// `count` bytes from the system CSPRNG.
    public init(randomCount count: Int) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        unsafe storage = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
        unsafe Sodium.randomBytes(storage)
    }

    /// Fills fresh secret storage through `body`, which must write all `count` bytes.
    public init<E: Error>(count: Int, fill body: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        let visible = unsafe UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
        unsafe visible.initializeMemory(as: UInt8.self, repeating: 0)
        do {
            try unsafe body(visible)
        } catch {
            unsafe Sodium.wipe(visible)
            unsafe buffer.deallocate()
            throw error
        }
        unsafe storage = visible
    }

    deinit {
        unsafe Sodium.wipe(storage)
        unsafe storage.deallocate()
    }

    /// Calls `body` with the secret bytes. Do not let the pointer escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try unsafe body(UnsafeRawBufferPointer(storage))
    }

    /// Constant-time equality (lengths are not secret).
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        unsafe Sodium.constantTimeEqual(UnsafeRawBufferPointer(storage), UnsafeRawBufferPointer(other.storage))
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}
