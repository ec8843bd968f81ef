import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// Native run requests (`docs/PROTOCOL.md` 3.2.1) against the receiver over HTTP: a run stores and acknowledges every
/// chunk, damaged run headers are refused before any byte is stored, and a chunk whose digest is wrong stops the run
/// with the earlier chunks stored and named in the answer.
@Suite struct ReceiverNativeRunTests {
    typealias Content = EngineFixture.NativeContent

    /// 6 chunks of 16 KiB, the last 1,696 bytes.
    static func content(seed: UInt64) -> Content {
        Content(bytes: ReceiverFixture.bytes(83_616, seed: seed), chunkSize: 16 * 1024, session: "runs-\(seed)")
    }

    static func runHeader(_ content: Content, _ range: Range<Int>, sha256: [Digest32]? = nil) -> AetherRunHeader {
        AetherRunHeader(
            length: Int64(range.reduce(0) { $0 + content.chunks[$1].count }),
            crc32c: range.map { CRC32C.checksum(content.chunks[$0]) },
            sha256: sha256 ?? range.map { content.hashes[$0] },
            link: content.links[range.upperBound - 1])
    }

    static func sendRun(
        _ fixture: ReceiverFixture, _ location: String, first: Int, field: String, body: [UInt8]
    ) async throws -> HTTPResponse {
        try await fixture.send(
            "PUT", location + "/chunks/\(first)", headers: [("Aether-Protocol", "1"), ("Aether-Chunk", field)],
            body: body)
    }

    static func received(_ fixture: ReceiverFixture, _ location: String) async throws -> [Int] {
        let response = try await fixture.send("GET", location, headers: [("Aether-Protocol", "1")])
        return try NativeStatusDocument(json: response.body).received.setIndices
    }

    @Test func theCapabilitiesAdvertiseTheLargestRun() async throws {
        var limits = ReceiverLimits(minimumChunkSize: 16 * 1024)
        limits.maximumRunChunks = 12
        let fixture = try ReceiverFixture(limits: limits)
        let backend = try await NativeBackend.discover(creationURL: fixture.uploadsURL, client: fixture.client)
        #expect(backend.server.maximumRun == 12)
        #expect(backend.maximumRunParts(of: RemoteUpload(location: "", uploadID: nil, size: 1, partSize: 1)) == 12)
    }

    @Test func aRunStoresEveryChunkAndTheUploadCompletes() async throws {
        let fixture = try ReceiverFixture()
        let content = Self.content(seed: 1)
        let location = try await ReceiverNativeAndLimitsTests.nativeCreate(fixture, content)
        let first = try await Self.sendRun(
            fixture, location, first: 0, field: Self.runHeader(content, 0..<4).fieldValue,
            body: Array(content.chunks[0..<4].joined()))
        #expect(first.status == 201)
        let receipt = try AetherRunReceiptHeader(parsing: first.headers["Aether-Run-Receipt"] ?? "")
        #expect(receipt == AetherRunReceiptHeader(index: 0, sha256: Array(content.hashes[0..<4])))
        // The short last run holds the short last chunk; sent again it is answered 200 (already stored).
        for status in [201, 200] {
            let last = try await Self.sendRun(
                fixture, location, first: 4, field: Self.runHeader(content, 4..<6).fieldValue,
                body: Array(content.chunks[4..<6].joined()))
            #expect(last.status == status)
        }
        #expect(try await Self.received(fixture, location) == Array(0..<6))
        // Each run is one chunk request in the latency histogram (a fleet's bench divides its time by the count).
        let metrics = String(decoding: try await fixture.send("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.split(separator: "\n").contains("aether_chunk_seconds_count 3"), "\(metrics)")
        let complete = NativeCompleteRequest(
            chainHead: try #require(content.links.last), fileSHA256: SHA256.hash(content.bytes),
            merkleRoot: try MerkleProofBuilder(chunkHashes: content.hashes).root)
        let done = try await fixture.send(
            "POST", location + "/complete",
            headers: [("Aether-Protocol", "1"), ("Content-Type", AetherWire.completeMediaType)],
            body: complete.jsonBytes)
        #expect(done.status == 200)
        #expect(try fixture.object(at: location) == content.bytes)
    }

    @Test(arguments: [
        ("count=0", 400), ("count above the maximum", 413), ("a list shorter than the count", 400),
        ("a length that is not the chunks' sum", 422), ("a run past the last chunk", 400),
    ])
    func aDamagedRunHeaderIsRefusedAndNothingIsStored(damage: String, status: Int) async throws {
        var limits = ReceiverLimits(minimumChunkSize: 16 * 1024)
        limits.maximumRunChunks = 3
        let fixture = try ReceiverFixture(limits: limits)
        let content = Self.content(seed: 2)
        let location = try await ReceiverNativeAndLimitsTests.nativeCreate(fixture, content)
        var first = 0
        var range = 0..<3
        var header = Self.runHeader(content, range)
        var field: String
        switch damage {
        case "count=0": field = "count=0, length=0, crc32c=(), sha-256=()"
        case "count above the maximum":
            range = 0..<4
            field = Self.runHeader(content, range).fieldValue
        case "a list shorter than the count":
            field = header.fieldValue.replacingOccurrences(of: "count=3", with: "count=4")
        case "a length that is not the chunks' sum":
            header.length -= 1
            field = header.fieldValue
        default:
            first = 4
            range = 4..<6
            field = Self.runHeader(content, range).fieldValue.replacingOccurrences(of: "count=2", with: "count=3")
        }
        let response = try await Self.sendRun(
            fixture, location, first: first, field: field, body: Array(content.chunks[range].joined()))
        #expect(response.status == status, "\(damage)")
        _ = try ReceiverFixture.problem(response)
        #expect(try await Self.received(fixture, location).isEmpty, "\(damage)")
    }

    @Test func aWrongDigestStopsTheRunWithTheEarlierChunksStoredAndNamed() async throws {
        let fixture = try ReceiverFixture()
        let content = Self.content(seed: 3)
        let location = try await ReceiverNativeAndLimitsTests.nativeCreate(fixture, content)
        var hashes = Array(content.hashes[0..<5])
        hashes[2] = SHA256.hash([1, 2, 3])
        let response = try await Self.sendRun(
            fixture, location, first: 0, field: Self.runHeader(content, 0..<5, sha256: hashes).fieldValue,
            body: Array(content.chunks[0..<5].joined()))
        #expect(response.status == 422)
        #expect(try ReceiverFixture.problem(response).name == "digest-mismatch")
        let receipt = try AetherRunReceiptHeader(parsing: response.headers["Aether-Run-Receipt"] ?? "")
        #expect(receipt == AetherRunReceiptHeader(index: 0, sha256: Array(content.hashes[0..<2])))
        #expect(try await Self.received(fixture, location) == [0, 1])
    }

    /// A native backend on `fixture` and an upload created through it for the content of `seed`, in 16 KiB chunks.
    static func created(_ fixture: ReceiverFixture, seed: UInt64) async throws -> (NativeBackend, Content, RemoteUpload)
    {
        let backend = try await NativeBackend.discover(creationURL: fixture.uploadsURL, client: fixture.client)
        let content = Self.content(seed: seed)
        let layout = try PartLayout(
            objectSize: Int64(content.bytes.count), preferred: 16 * 1024, capabilities: backend.capabilities)
        let upload = try await backend.create(
            UploadDescription(
                size: Int64(content.bytes.count), layout: layout, contentType: nil, chainSessionID: content.session))
        return (backend, content, upload)
    }

    @Test func theNativeBackendReportsTheStoredPrefixOfARunThatFailedPartWay() async throws {
        let fixture = try ReceiverFixture()
        let (backend, content, upload) = try await ReceiverNativeRunTests.created(fixture, seed: 4)
        func part(_ index: Int, sha256: Digest32? = nil) -> UploadPart {
            UploadPart(
                index: index, offset: Int64(index * content.chunkSize), body: .bytes(content.chunks[index]),
                length: Int64(content.chunks[index].count), sha256: sha256 ?? content.hashes[index],
                crc32c: CRC32C.checksum(content.chunks[index]), chainLink: content.links[index])
        }
        let damaged = [part(0), part(1), part(2, sha256: SHA256.hash([9])), part(3)]
        let partial = try await backend.send(run: damaged, to: upload)
        #expect(partial.receipts.map(\.index) == [0, 1])
        #expect(partial.stoppedBy?.code == .checksumMismatch)
        let rest = try await backend.send(run: (2..<6).map { part($0) }, to: upload)
        #expect(rest.receipts.map(\.index) == [2, 3, 4, 5])
        #expect(rest.stoppedBy == nil)
        #expect(try await Self.received(fixture, location: upload.location) == Array(0..<6))
        // A run longer than the receiver takes is refused before anything is sent.
        await #expect(throws: TransportError.self) {
            _ = try await backend.send(run: Array(repeating: part(0), count: 65), to: upload)
        }
    }

    static func received(_ fixture: ReceiverFixture, location: String) async throws -> [Int] {
        try await received(fixture, location)
    }
}
