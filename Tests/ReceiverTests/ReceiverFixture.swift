import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherTransport
import Foundation
import Synchronization
import Testing

/// An in-process receiver on 127.0.0.1 and a free port over a temporary store, with helpers that play a client.
final class ReceiverFixture: @unchecked Sendable {
    // @unchecked: the fields are set once in init; the log lines sit behind a Mutex.
    let directory: FilePath
    let server: ReceiverServer
    let log = LogLines()
    let client: HTTPClient

    init(
        tokens: BearerTokens? = nil, limits: ReceiverLimits = ReceiverLimits(minimumChunkSize: 16 * 1024),
        logFormat: RequestLog.Format = .text, catalogURL: String? = nil,
        http: HTTPServerConfiguration = HTTPServerConfiguration()
    ) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-serve-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        directory = FilePath(path)
        let lines = log
        var options = ReceiverServer.Options(
            directory: directory, http: http, limits: limits, tokens: tokens, logFormat: logFormat)
        options.catalogURL = catalogURL
        server = try ReceiverServer(options, logSink: { line in lines.append(line) })
        client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
    }

    deinit {
        server.stop()
        client.shutDown()
        try? FileManager.default.removeItem(atPath: directory.description)
    }

    var url: String { server.url }
    var uploadsURL: String { server.url + "/uploads" }

    /// Sends one request.
    func send(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) async throws -> HTTPResponse {
        try await client.send(
            HTTPRequest(
                method: method, url: path.hasPrefix("http") ? path : url + path, headers: HTTPHeaders(headers),
                body: .bytes(body)))
    }

    /// The stored object of the upload at `location` (`/uploads/ID` or a URL ending in it), if any.
    func object(at location: String) throws -> [UInt8]? {
        guard let last = location.split(separator: "/").last else { return nil }
        let id = try UploadID(last)
        let path = try DirectoryBlobStore(root: directory).path(of: .object(id)).description
        return FileManager.default.contents(atPath: path).map { Array($0) }
    }

    /// Every file under the store with its SHA-256 (the catalogue's files excluded: WAL bytes move on reads).
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

    /// Deterministic bytes.
    static func bytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    /// The problem document of a response, checked to be one.
    static func problem(_ response: HTTPResponse) throws -> ProblemDocument {
        #expect(response.headers["Content-Type"] == "application/problem+json")
        return try ProblemDocument(json: response.body)
    }

    /// A part of `content` under `layout`.
    static func part(_ index: Int, _ content: [UInt8], _ layout: PartLayout) -> UploadPart {
        let range = layout.range(ofPart: index)
        let bytes = Array(content[Int(range.lowerBound)..<Int(range.upperBound)])
        return UploadPart(
            index: index, offset: range.lowerBound, body: .bytes(bytes), length: Int64(bytes.count),
            sha256: SHA256.hash(bytes), crc32c: CRC32C.checksum(bytes))
    }

    /// Uploads `content` through `backend` in parts of `partSize`, the first with the creation, and completes.
    static func upload(_ content: [UInt8], partSize: Int64, _ backend: some UploadBackend, sha256: Bool = true)
        async throws -> (RemoteUpload, UploadReceipt)
    {
        let layout = try PartLayout(
            objectSize: Int64(content.count), preferred: partSize, capabilities: backend.capabilities, alignment: 1)
        let description = UploadDescription(
            size: Int64(content.count), layout: layout, contentType: "application/octet-stream",
            chainSessionID: "receiver-test", sha256: sha256 ? SHA256.hash(content) : nil)
        let (upload, first) = try await backend.create(description, sending: part(0, content, layout))
        var receipts = [first]
        for index in 1..<layout.partCount {
            receipts.append(try await backend.send(part(index, content, layout), to: upload))
        }
        let receipt = try await backend.complete(
            upload, summary: CompletionSummary(parts: receipts, fileSHA256: SHA256.hash(content)))
        return (upload, receipt)
    }
}

extension ReceiverFixture {
    /// A spot check of whole chunks `indices` of `content` (in chunks of `chunkSize`, hashes `hashes`) through
    /// `backend`; true when every MAC the receiver gave is the one over the client's bytes.
    static func spotCheck(
        _ backend: NativeBackend, _ upload: RemoteUpload, content: [UInt8], chunkSize: Int64, hashes: [Digest32],
        indices: [Int], requireProofs: Bool
    ) async throws -> Bool {
        let ranges = indices.map { index in
            let start = min(content.count, index * Int(chunkSize))
            return Array(content[start..<min(content.count, start + Int(chunkSize))])
        }
        let items = try zip(indices, ranges).map {
            try ByzantineChallenge.Item(index: $0, offset: 0, length: Int64($1.count))
        }
        let challenge = try ByzantineChallenge.fresh(uploadID: NativeBackend.spotCheckUploadID(upload), items: items)
        let macs = try await backend.challenge(upload, challenge, chunkHashes: hashes, requireProofs: requireProofs)
        let expected = try zip(items, ranges).map { try challenge.response(for: $0, bytes: $1) }
        return macs == expected
    }
}

/// Log lines a receiver wrote.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
