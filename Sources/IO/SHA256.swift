/// Streaming SHA-256 (OpenSSL, SHA-NI where the CPU has it). A value type: copying it forks the stream.
public struct SHA256: Sendable {
    private var context: OpenSSL.SHA256Context

    /// A fresh hash.
    public init() { context = OpenSSL.sha256Init() }

    /// Feeds raw bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        unsafe OpenSSL.sha256Update(&context, bytes)
    }

    /// Feeds bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        unsafe ContiguousBytes.with(bytes) { unsafe OpenSSL.sha256Update(&context, $0) }
    }

    /// Feeds a digest's 32 bytes.
    public mutating func update(_ digest: Digest32) {
        unsafe digest.withUnsafeBytes { unsafe OpenSSL.sha256Update(&context, $0) }
    }

    /// The digest of everything fed so far; the hash stays usable.
    public func finalize() -> Digest32 { OpenSSL.sha256Final(context) }

    /// One-shot SHA-256 of raw bytes.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> Digest32 { unsafe OpenSSL.sha256(bytes) }

    /// One-shot SHA-256.
    public static func hash(_ bytes: some Sequence<UInt8>) -> Digest32 {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
