import AetherIO
import AetherIntegrity
import AetherReceiver
import Foundation
import Testing

/// A fresh store and catalogue in a temporary directory, an engine over them with a manual clock, and helpers that
/// play a client.
final class EngineFixture {
    let directory: FilePath
    let clock = ManualClock()
    let limits: ReceiverLimits
    private(set) var engine: UploadEngine
    let alice = ClientIdentity("alice")
    let mallory = ClientIdentity("mallory")

    /// Which catalogue the engine runs on; PostgreSQL gets a new database on the shared test server.
    let catalogue: CatalogueKind
    /// The PostgreSQL database's URL (nil for SQLite).
    let postgresURL: String?

    init(limits: ReceiverLimits = EngineFixture.smallLimits, catalogue: CatalogueKind = .sqlite) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-receiver-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        directory = FilePath(path)
        self.limits = limits
        self.catalogue = catalogue
        postgresURL = catalogue == .postgres ? try PostgresTestServer.sharedDatabase() : nil
        engine = try Self.makeEngine(directory: directory, postgresURL: postgresURL, limits: limits, clock: clock)
    }

    private static func makeEngine(
        directory: FilePath, postgresURL: String?, limits: ReceiverLimits, clock: ManualClock
    ) throws -> UploadEngine {
        guard let postgresURL else { return try UploadEngine(directory: directory, limits: limits, clock: clock) }
        return UploadEngine(
            blobs: try DirectoryBlobStore(root: directory), catalog: try PostgresCatalog(url: postgresURL),
            limits: limits, clock: clock)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory.description) }

    /// Chunks from 16 KiB, so tests stay small.
    static let smallLimits = ReceiverLimits(minimumChunkSize: 16 * 1024, maximumOpenUploadsPerClient: 8)
    static let chunkSize = 16 * 1024

    var blobStore: DirectoryBlobStore { get throws { try DirectoryBlobStore(root: directory) } }

    /// A new engine over the same directory, as after a restart.
    func restart() throws {
        engine = try Self.makeEngine(directory: directory, postgresURL: postgresURL, limits: limits, clock: clock)
    }

    /// Deterministic bytes.
    static func bytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    /// The path of every file under the store, with its SHA-256 (the catalogue's files excluded: WAL bytes move).
    func storeSnapshot() throws -> [String: String] {
        var result: [String: String] = [:]
        let root = directory.description
        guard let walker = FileManager.default.enumerator(atPath: root) else { return result }
        for case let relative as String in walker where !relative.hasPrefix("catalog.sqlite3") {
            let full = root + "/" + relative
            if try Syscall.stat(FilePath(full)).isRegularFile {
                result[relative] = SHA256.hash(Array(try Data(contentsOf: URL(fileURLWithPath: full)))).hex
            } else {
                result[relative + "/"] = "directory"
            }
        }
        return result
    }

    /// A native upload of `content` in chunks of `chunkSize`.
    struct NativeContent {
        let bytes: [UInt8]
        let chunkSize: Int
        let session: String
        var chunks: [[UInt8]] {
            bytes.isEmpty
                ? [[]]
                : stride(from: 0, to: bytes.count, by: chunkSize).map {
                    Array(bytes[$0..<min($0 + chunkSize, bytes.count)])
                }
        }
        var hashes: [Digest32] { chunks.map { SHA256.hash($0) } }
        var links: [Digest32] {
            var link = ChunkCommitmentChain.genesis(sessionID: session)
            return hashes.map { hash in
                link = ChunkCommitmentChain.link(chunkHash: hash, previous: link)
                return link
            }
        }
        func descriptor(_ index: Int) -> ChunkDescriptor {
            ChunkDescriptor(
                length: chunks[index].count, crc32c: CRC32C.checksum(chunks[index]), sha256: hashes[index],
                link: links[index])
        }
        var claim: CompletionClaim {
            get throws {
                CompletionClaim(
                    chainHead: links.last ?? ChunkCommitmentChain.genesis(sessionID: session),
                    fileSHA256: SHA256.hash(bytes), merkleRoot: try MerkleProofBuilder(chunkHashes: hashes).root,
                    chunkHashes: hashes)
            }
        }
        /// Whole-chunk spot-check ranges of `indices`.
        func items(_ indices: [Int]) throws -> [ByzantineChallenge.Item] {
            try indices.map { try ByzantineChallenge.Item(index: $0, offset: 0, length: Int64(chunks[$0].count)) }
        }
        /// The version-2 answer for `item` over the client's own bytes of upload `id`.
        func mac(_ item: ByzantineChallenge.Item, nonce: [UInt8], id: UploadID) throws -> Digest32 {
            let challenge = try ByzantineChallenge(uploadID: Array(id.rawValue.utf8), items: [item], nonce: nonce)
            let range = Array(chunks[item.index][Int(item.offset)..<Int(item.offset + item.length)])
            return try challenge.response(for: item, bytes: range)
        }
        var newUpload: NewUpload {
            NewUpload(
                uploadProtocol: .native, size: Int64(bytes.count), chunkSize: chunkSize, chunks: chunks.count,
                chainSessionID: session)
        }
    }

    func native(_ count: Int, seed: UInt64 = 1, session: String = "session-1") -> NativeContent {
        NativeContent(bytes: Self.bytes(count, seed: seed), chunkSize: Self.chunkSize, session: session)
    }

    /// Sends chunk `index` of `content` whole.
    @discardableResult
    func send(_ content: NativeContent, _ index: Int, to id: UploadID) throws -> ChunkOutcome {
        let sink = try engine.openChunk(id, index: index, descriptor: content.descriptor(index), owner: alice)
        try sink.write(content.chunks[index])
        return try sink.finish()
    }

    /// Appends `bytes` at `offset` in one request.
    @discardableResult
    func append(_ bytes: [UInt8], to id: UploadID, at offset: Int64, completes: Bool? = nil) throws -> AppendResult {
        let sink = try engine.openAppend(
            id, offset: offset, owner: alice, length: Int64(bytes.count), completes: completes)
        try sink.write(bytes)
        return try sink.finish()
    }

    func objectBytes(_ id: UploadID) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: directory.description + "/objects/" + id.rawValue)))
    }

    func objectExists(_ id: UploadID) -> Bool {
        FileManager.default.fileExists(atPath: directory.description + "/objects/" + id.rawValue)
    }
}

/// The catalogues the engine suites run against: everything SQLite passes, PostgreSQL passes.
enum CatalogueKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres
    var testDescription: String { rawValue }
}

/// Runs `body` and returns the `ReceiverError` it threw (nil when it did not throw).
func receiverError(_ body: () throws -> Void) -> ReceiverError? {
    do {
        try body()
        return nil
    } catch let error as ReceiverError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}
