/// Streaming HMAC-SHA-256 (OpenSSL). A value type: copying it forks the stream.
public struct HMACSHA256: @unchecked Sendable {
    // @unchecked: the context is copied before any mutation when shared (copy-on-write below).
    private var context: OpenSSL.HMACContext

    /// Starts an HMAC under `key`.
    public init(key: SecureBytes) throws(IOError) {
        context = try unsafe key.withUnsafeBytes { (raw) throws(IOError) -> OpenSSL.HMACContext in
            try unsafe OpenSSL.HMACContext(key: raw)
        }
    }

    /// Feeds raw bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) throws(IOError) {
        try makeUnique()
        unsafe context.update(bytes)
    }

    /// Feeds bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) throws(IOError) {
        try makeUnique()
        let array = Array(bytes)
        let context = self.context
        unsafe array.withUnsafeBytes { unsafe context.update($0) }
    }

    private mutating func makeUnique() throws(IOError) {
        if !isKnownUniquelyReferenced(&context) { context = try OpenSSL.HMACContext(copying: context) }
    }

    /// The MAC of everything fed so far; the HMAC stays usable.
    public func finalize() throws(IOError) -> Digest32 { try context.finalize() }

    /// One-shot HMAC-SHA-256 of raw bytes: one context, finalised in place (no copy), the hot path of
    /// KDFs that run many short MACs (Noise's HKDF runs 26 per handshake).
    public static func authenticate(_ bytes: UnsafeRawBufferPointer, key: SecureBytes) throws(IOError) -> Digest32 {
        let context = try unsafe key.withUnsafeBytes { (raw) throws(IOError) -> OpenSSL.HMACContext in
            try unsafe OpenSSL.HMACContext(key: raw)
        }
        unsafe context.update(bytes)
        return try context.finalizeInPlace()
    }

    /// One-shot HMAC-SHA-256.
    public static func authenticate(_ bytes: some Sequence<UInt8>, key: SecureBytes) throws(IOError) -> Digest32 {
        let array = Array(bytes)
        let result: Result<Digest32, IOError> = unsafe array.withUnsafeBytes { raw in
            do throws(IOError) { return .success(try unsafe authenticate(raw, key: key)) } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
