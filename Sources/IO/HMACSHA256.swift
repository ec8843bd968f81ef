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

    /// The MAC of everything fed so far. A copy of the value that is used afterwards stays usable; when
    /// nothing else holds the context it is finalised in place, saving a context copy per MAC.
    public consuming func finalize() throws(IOError) -> Digest32 {
        if isKnownUniquelyReferenced(&context) { return try context.finalizeInPlace() }
        return try context.finalize()
    }

    /// One-shot HMAC-SHA-256.
    public static func authenticate(_ bytes: some Sequence<UInt8>, key: SecureBytes) throws(IOError) -> Digest32 {
        var mac = try HMACSHA256(key: key)
        try mac.update(bytes)
        return try mac.finalize()
    }
}
