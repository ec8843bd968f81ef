public import AetherIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The JSON index `aether ec encode` writes beside the shards: the code, the sizes, the SHA-256 of
/// every shard file (so `aether ec decode` can tell good shards from damaged ones), and the SHA-256 of
/// the whole original file, which decode checks on the rebuilt file before it replaces anything, so an
/// edited index gives an error, never a wrong file.
///
///     {"format":"aether-ec/2","dataShards":10,"parityShards":4,"field":"gf256",
///      "shardSize":104858,"fileSize":1048576,"fileSHA256":"<64 hex>","shardSHA256":["<64 hex>", ...]}
///
/// `aether-ec/1` indexes (before the file digest) still parse, with `fileSHA256` nil.
///
/// Shard i is the file `shard-NNNNN.bin` (five digits). Data shard i holds file bytes
/// [i x shardSize, (i + 1) x shardSize), zero-padded past the end of the file.
public struct ShardIndex: Sendable, Equatable {
    /// The format tag, checked on read.
    public static let format = "aether-ec/2"
    /// The earlier format, without `fileSHA256`: read, never written.
    public static let formatWithoutFileDigest = "aether-ec/1"
    /// The index's file name inside the shard directory.
    public static let fileName = "index.json"
    /// Largest index file accepted (65,536 shards of 64-hex digests fit well within it).
    static let maximumIndexBytes = 16 << 20

    /// The code.
    public let code: ReedSolomonCode
    /// Bytes in every shard.
    public let shardSize: Int
    /// Bytes in the original file.
    public let fileSize: Int
    /// SHA-256 of each shard, in shard order (k data shards, then m parity shards).
    public let shardDigests: [Digest32]
    /// SHA-256 of the whole original file; nil only in an `aether-ec/1` index.
    public let fileSHA256: Digest32?

    /// The file name of shard `index`.
    public static func shardFileName(_ index: Int) -> String {
        let digits = String(index)
        return "shard-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits + ".bin"
    }

    /// The shard size for a file of `fileSize` bytes split into k data shards: ceil(fileSize / k), rounded up
    /// to the field's symbol size.
    public static func shardSize(fileSize: Int, code: ReedSolomonCode) -> Int {
        let perShard = (fileSize + code.dataShards - 1) / code.dataShards
        let symbol = code.field.symbolSize
        return (perShard + symbol - 1) / symbol * symbol
    }

    /// An index; checks that the sizes agree with each other.
    public init(
        code: ReedSolomonCode, fileSize: Int, shardDigests: [Digest32], fileSHA256: Digest32?
    ) throws(CodingError) {
        guard fileSize >= 0, fileSize <= Int.max / 2 else {
            throw CodingError(.malformedIndex, "file size \(fileSize) is out of range")
        }
        guard shardDigests.count == code.totalShards else {
            throw CodingError(.malformedIndex, "\(shardDigests.count) shard digests for \(code.totalShards) shards")
        }
        self.code = code
        self.fileSize = fileSize
        self.shardSize = Self.shardSize(fileSize: fileSize, code: code)
        self.shardDigests = shardDigests
        self.fileSHA256 = fileSHA256
    }

    private struct Wire: Codable {
        var format: String
        var dataShards: Int
        var parityShards: Int
        var field: String
        var shardSize: Int
        var fileSize: Int
        var fileSHA256: String?
        var shardSHA256: [String]
    }

    /// The JSON bytes (`aether-ec/2`; `aether-ec/1` for an index without `fileSHA256`).
    public func encoded() throws(CodingError) -> [UInt8] {
        // An index without the file digest keeps its old format, so it never claims to be authenticated.
        let wire = Wire(
            format: fileSHA256 == nil ? Self.formatWithoutFileDigest : Self.format, dataShards: code.dataShards,
            parityShards: code.parityShards,
            field: code.field == .gf256 ? "gf256" : "gf65536", shardSize: shardSize, fileSize: fileSize,
            fileSHA256: fileSHA256?.hex, shardSHA256: shardDigests.map(\.hex))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(wire)) + [0x0A]
        } catch {
            throw CodingError(.malformedIndex, "cannot encode the index: \(error)")
        }
    }

    /// Parses and validates index JSON; anything unexpected is `.malformedIndex`.
    public init(json: [UInt8]) throws(CodingError) {
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(json))
        } catch {
            throw CodingError(.malformedIndex, "index is not valid JSON of the expected shape")
        }
        guard wire.format == Self.format || wire.format == Self.formatWithoutFileDigest else {
            throw CodingError(.malformedIndex, "unknown index format \"\(wire.format.prefix(40))\"")
        }
        var fileDigest: Digest32?
        if wire.format == Self.format {
            guard let text = wire.fileSHA256, let digest = try? Digest32(hex: text) else {
                throw CodingError(.malformedIndex, "an \(Self.format) index needs fileSHA256 as 64 hex digits")
            }
            fileDigest = digest
        } else if wire.fileSHA256 != nil {
            throw CodingError(.malformedIndex, "an \(Self.formatWithoutFileDigest) index has no fileSHA256")
        }
        let field: ReedSolomonField
        switch wire.field {
        case "gf256": field = .gf256
        case "gf65536": field = .gf65536
        default: throw CodingError(.malformedIndex, "unknown field \"\(wire.field.prefix(20))\"")
        }
        let code: ReedSolomonCode
        do {
            code = try ReedSolomonCode(dataShards: wire.dataShards, parityShards: wire.parityShards, field: field)
        } catch {
            throw CodingError(.malformedIndex, "index describes an invalid code: \(error.message)")
        }
        var digests: [Digest32] = []
        for text in wire.shardSHA256 {
            do {
                digests.append(try Digest32(hex: text))
            } catch {
                throw CodingError(.malformedIndex, "shard digest \(digests.count) is not 64 hex digits")
            }
        }
        try self.init(code: code, fileSize: wire.fileSize, shardDigests: digests, fileSHA256: fileDigest)
        guard wire.shardSize == shardSize else {
            throw CodingError(
                .malformedIndex, "shard size \(wire.shardSize) does not match \(shardSize) for the file size and k")
        }
    }
}
