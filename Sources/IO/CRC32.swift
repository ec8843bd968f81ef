/// Streaming CRC-32 (ISO-HDLC, the polynomial of zlib, gzip and PNG; reflected 0xEDB88320) through zlib.
/// Not CRC32C: tus servers name this one `crc32` in `Tus-Checksum-Algorithm`.
public struct CRC32: Sendable, Hashable {
    /// The checksum of everything fed so far (zlib keeps the final, inverted form between calls).
    public private(set) var value: UInt32 = 0

    /// A fresh checksum.
    public init() {}

    /// Feeds raw bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        value = unsafe Zlib.crc32(value, bytes)
    }

    /// Feeds bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        unsafe array.withUnsafeBytes { unsafe update($0) }
    }

    /// Feeds a chunk's bytes where they lie.
    public mutating func update(_ chunk: Chunk) {
        unsafe chunk.withUnsafeBytes { unsafe update($0) }
    }

    /// One-shot CRC-32.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }
}
