public import AetherIO
import Foundation

/// What a capture stored, in one document: every file's relative path, size, SHA-256, Merkle root and location, and
/// one root over all of them. The root is the Merkle tree (`StreamingMerkleTree`) over one leaf per file, in the
/// byte order of the relative paths; a file's leaf is SHA-256 over `aether-capture-leaf-v1` and a NUL, the path's
/// length (8 bytes, big-endian), the path, the size (8 bytes, big-endian), the file's SHA-256 and its Merkle root.
/// The leaf binds the name to the bytes: the same content under two names gives two leaves, and a renamed file
/// changes the root. The manifest is uploaded beside the files as `.aether-capture.json` and kept in the state
/// directory (`docs/CAPTURES.md`). A native receiver checks it against what it holds and serves it
/// (`GET /uploads/{id}/capture`, `docs/PROTOCOL.md` 3.11).
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

        /// A file's line.
        public init(path: String, size: Int64, sha256: String, merkleRoot: String, location: String) {
            self.path = path
            self.size = size
            self.sha256 = sha256
            self.merkleRoot = merkleRoot
            self.location = location
        }

        enum CodingKeys: String, CodingKey {
            case path, size, sha256, location
            case merkleRoot = "merkle_root"
        }
    }

    public let files: [Entry]
    public let root: Digest32

    /// The manifest of `files`, already sorted by their paths' bytes, with `root` their root.
    public init(sortedFiles files: [Entry], root: Digest32) {
        self.files = files
        self.root = root
    }

    /// The most a manifest document may hold (about 250 bytes a file: a million files).
    public static let maximumBytes = 256 << 20

    /// A manifest document parsed strictly (`jsonBytes`' shape): version 1, exactly the known keys, lowercase hex
    /// digests, relative paths (no empty, `.` or `..` segment, no leading `/`, no NUL) in strictly increasing byte
    /// order, sizes of 0 or more; then the root recomputed from the files must be the document's root
    /// (`.digestMismatch` otherwise: a file's line was changed, added or removed).
    public static func parse(_ bytes: [UInt8]) throws(IntegrityError) -> CaptureManifest {
        guard bytes.count <= maximumBytes else {
            throw IntegrityError(.malformedManifest, "the capture manifest is over \(maximumBytes >> 20) MiB")
        }
        struct Document: Decodable {
            let version: Int
            let root: String
            let files: [Entry]
        }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(bytes))
        } catch {
            throw IntegrityError(.malformedManifest, "the capture manifest has a value of the wrong type")
        }
        guard document.version == 1 else {
            throw IntegrityError(.unsupported, "capture manifest version \(document.version) (1 is known)")
        }
        guard let root = lowercaseDigest(document.root) else {
            throw IntegrityError(.malformedManifest, "the capture manifest's root is not 64 lowercase hex digits")
        }
        var tree = StreamingMerkleTree()
        var previous: [UInt8]?
        for (index, entry) in document.files.enumerated() {
            guard entry.size >= 0, let sha256 = lowercaseDigest(entry.sha256),
                let merkleRoot = lowercaseDigest(entry.merkleRoot)
            else {
                throw IntegrityError(
                    .malformedManifest, "file \(index) of the capture manifest has a negative size or a bad digest")
            }
            let path = Array(entry.path.utf8)
            guard isRelative(path) else {
                throw IntegrityError(
                    .malformedManifest, "file \(index) of the capture manifest has a path that is not relative")
            }
            if let previous, !previous.lexicographicallyPrecedes(path) {
                throw IntegrityError(
                    .malformedManifest, "the capture manifest's paths are not in order at file \(index)")
            }
            previous = path
            try tree.append(leaf(path, size: entry.size, sha256: sha256, merkleRoot: merkleRoot))
        }
        let entries = document.files
        guard tree.root == root else {
            throw IntegrityError(.digestMismatch, "the capture manifest's root is not the root of its files")
        }
        let manifest = CaptureManifest(sortedFiles: entries, root: root)
        // Exactly the bytes a capture writes (UTF-8, keys sorted, integers, no key twice, one line): a document that
        // decodes to the same values in another spelling (a byte-order mark, UTF-16, `1.0`, a repeated key, an
        // unknown key) is not a manifest this tool wrote.
        let canonical = manifest.jsonBytes
        guard bytes == canonical || bytes == Array(canonical.dropLast()) else {
            throw IntegrityError(
                .malformedManifest,
                "the capture manifest is not written as a capture writes it (UTF-8 JSON, keys sorted, integers, no "
                    + "other key, one line)")
        }
        return manifest
    }

    /// A digest written as 64 lowercase hex digits, nil otherwise.
    private static func lowercaseDigest(_ text: String) -> Digest32? {
        guard text.utf8.count == 64, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        return try? Digest32(hex: text)
    }

    /// Whether `path` is relative and stays below its folder.
    private static func isRelative(_ path: [UInt8]) -> Bool {
        guard !path.isEmpty, !path.contains(0), path.first != UInt8(ascii: "/") else { return false }
        return path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).allSatisfy { segment in
            !segment.isEmpty && !segment.elementsEqual([UInt8(ascii: ".")])
                && !segment.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")])
        }
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
