/// Streaming SHA-1 (OpenSSL). Only for protocols that name it as a transfer checksum (tus `Upload-Checksum: sha1`);
/// never for integrity or security decisions, which use SHA-256. A value type: copying it forks the stream.
public struct SHA1: Sendable {
    private var context: OpenSSL.SHA1Context

    /// A fresh hash.
    public init() { context = OpenSSL.sha1Init() }

    /// Feeds raw bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        unsafe OpenSSL.sha1Update(&context, bytes)
    }

    /// Feeds bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        unsafe ContiguousBytes.with(bytes) { unsafe OpenSSL.sha1Update(&context, $0) }
    }

    /// Feeds a chunk's bytes where they lie.
    public mutating func update(_ chunk: Chunk) {
        unsafe chunk.withUnsafeBytes { unsafe OpenSSL.sha1Update(&context, $0) }
    }

    /// The 20-byte digest of everything fed so far; the hash stays usable.
    public func finalize() -> [UInt8] { OpenSSL.sha1Final(context) }

    /// One-shot SHA-1.
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA1()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
