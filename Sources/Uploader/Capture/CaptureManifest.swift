public import AetherIO
public import AetherIntegrity
import Foundation

/// What a capture stored, in one document: every file's relative path, size, SHA-256, Merkle root and location, and
/// one root over all of them. The root is the Merkle tree (`StreamingMerkleTree`) over one leaf per file, in the
/// byte order of the relative paths; a file's leaf is SHA-256 over `aether-capture-leaf-v1` and a NUL, the path's
/// length (8 bytes, big-endian), the path, the size (8 bytes, big-endian), the file's SHA-256 and its Merkle root.
/// The leaf binds the name to the bytes: the same content under two names gives two leaves, and a renamed file
/// changes the root. The manifest is uploaded beside the files as `.aether-capture.json` and kept in the state
/// directory (`docs/CAPTURES.md`).
public struct CaptureManifest: Sendable, Hashable {
    /// The file the manifest is stored as at the destination.
    public static let name = ".aether-capture.json"

    /// One file of the manifest.
    public struct Entry: Sendable, Hashable, Codable {
        public let path: String
        public let size: Int64
        public let sha256: String
        public let merkleRoot: String
        public let location: String

        enum CodingKeys: String, CodingKey {
            case path, size, sha256, location
            case merkleRoot = "merkle_root"
        }
    }

    public let files: [Entry]
    public let root: Digest32

    /// The manifest of `files` (sorted here by their paths' bytes).
    public init(_ files: [CaptureFileResult]) throws(IntegrityError) {
        let sorted = files.sorted { $0.relativePath.lexicographicallyPrecedes($1.relativePath) }
        var tree = StreamingMerkleTree()
        for file in sorted {
            try tree.append(
                Self.leaf(file.relativePath, size: file.size, sha256: file.sha256, merkleRoot: file.merkleRoot))
        }
        self.files = sorted.map {
            Entry(
                path: $0.path, size: $0.size, sha256: $0.sha256.hex, merkleRoot: $0.merkleRoot.hex,
                location: $0.location)
        }
        root = tree.root
    }

    /// A file's leaf.
    public static func leaf(_ path: [UInt8], size: Int64, sha256: Digest32, merkleRoot: Digest32) -> Digest32 {
        var hash = SHA256()
        hash.update(Array("aether-capture-leaf-v1\0".utf8))
        hash.update(Self.bigEndian(UInt64(path.count)))
        hash.update(path)
        hash.update(Self.bigEndian(UInt64(bitPattern: size)))
        hash.update(sha256.bytes)
        hash.update(merkleRoot.bytes)
        return hash.finalize()
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }

    /// The document: `{"version":1,"root":HEX,"files":[{"path","size","sha256","merkle_root","location"}...]}`,
    /// keys sorted, one line.
    public var jsonBytes: [UInt8] {
        struct Document: Encodable {
            let version = 1
            let root: String
            let files: [Entry]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Document(root: root.hex, files: files))) ?? Data()
        return Array(data) + [0x0A]
    }
}
