/// Streaming MD5 (OpenSSL). Only where a protocol names it: S3's ETag of an unencrypted part is the MD5 of its
/// bytes, which a client can compare with what it sent. Never for integrity or security decisions on its own;
/// those rest on SHA-256. A value type: copying it forks the stream.
public struct MD5: Sendable {
    private var context: OpenSSL.MD5Context

    /// A fresh hash.
    public init() { context = OpenSSL.md5Init() }

    /// Feeds raw bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        unsafe OpenSSL.md5Update(&context, bytes)
    }

    /// Feeds bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        unsafe ContiguousBytes.with(bytes) { unsafe OpenSSL.md5Update(&context, $0) }
    }

    /// Feeds a chunk's bytes where they lie.
    public mutating func update(_ chunk: Chunk) {
        unsafe chunk.withUnsafeBytes { unsafe OpenSSL.md5Update(&context, $0) }
    }

    /// The 16-byte digest of everything fed so far; the hash stays usable.
    public func finalize() -> [UInt8] { OpenSSL.md5Final(context) }

    /// One-shot MD5.
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = MD5()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
