/// The digests of one chunk, computed in one pass over its bytes: what the Integrity layer turns
/// into a Merkle leaf and commitment link, and what the Uploader sends beside the chunk.
public struct ChunkDigest: Sendable, Hashable, CustomStringConvertible {
    /// Zero-based chunk index.
    public let index: Int
    /// Offset of the chunk's first byte in the file.
    public let offset: Int64
    /// Bytes in the chunk.
    public let length: Int
    /// SHA-256 of the chunk.
    public let sha256: Digest32
    /// CRC32C of the chunk (S3's `x-amz-checksum-crc32c` of a part).
    public let crc32c: UInt32
    /// Estimated fraction of bytes a fast compressor saves on this chunk, 0 (incompressible) up to
    /// nearly 1: deflate level 1 on 32 KiB samples taken every 5 MiB from the chunk's start.
    public let compressibility: Double

    /// A digest from its parts (used by decoders and tests; readers compute it with `ChunkHasher`).
    public init(index: Int, offset: Int64, length: Int, sha256: Digest32, crc32c: UInt32, compressibility: Double) {
        self.index = index
        self.offset = offset
        self.length = length
        self.sha256 = sha256
        self.crc32c = crc32c
        self.compressibility = compressibility
    }

    /// The CRC32C as 8 lowercase hex digits.
    public var crc32cHex: String { CRC32C.hex(crc32c) }

    public var description: String {
        "chunk \(index) @\(offset)+\(length) sha256=\(sha256.hex) crc32c=\(crc32cHex)"
    }
}

extension CRC32C {
    /// A checksum as 8 lowercase hex digits.
    public static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
