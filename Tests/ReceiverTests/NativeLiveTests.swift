import AetherCoding
import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherSecurity
import Foundation
import Synchronization
import Testing

@testable import AetherTransport

/// The native client (`NativeBackend`) against the real receiver (`ReceiverServer` on 127.0.0.1): uploads in
/// parallel and out of order, resume from the bitmap after an interrupted chunk, a chunk rebuilt from parity, a
/// compressed chunk, a challenge, possession dedup, and a tampered receipt refused.
@Suite struct NativeLiveTests {
    static let chunkSize: Int64 = 16 << 10

    /// An object cut into chunks with everything the client computes over it.
    struct Object {
        let content: [UInt8]
        let sessionID: String
        let hashes: [Digest32]
        let links: [Digest32]
        let root: Digest32
        let head: Digest32
        let sha256: Digest32

        init(_ content: [UInt8], sessionID: String = "native-live") throws {
            self.content = content
            self.sessionID = sessionID
            let count = max(1, (content.count + Int(NativeLiveTests.chunkSize) - 1) / Int(NativeLiveTests.chunkSize))
            let hashes = (0..<count).map { SHA256.hash(Self.slice(content, $0)) }
            var chain = try ChunkCommitmentChain(sessionID: sessionID, plannedChunkCount: count)
            links = hashes.map { chain.append($0) }
            head = chain.head
            root = try MerkleProofBuilder(chunkHashes: hashes).root
            sha256 = SHA256.hash(content)
            self.hashes = hashes
        }

        static func slice(_ content: [UInt8], _ index: Int) -> [UInt8] {
            let size = Int(NativeLiveTests.chunkSize)
            return Array(content[min(index * size, content.count)..<min(index * size + size, content.count)])
        }

        var count: Int { hashes.count }

        func part(_ index: Int) -> UploadPart {
            let bytes = Self.slice(content, index)
            return UploadPart(
                index: index, offset: Int64(index) * NativeLiveTests.chunkSize, body: .bytes(bytes),
                length: Int64(bytes.count), sha256: hashes[index], crc32c: CRC32C.checksum(bytes),
                chainLink: links[index],
                idempotencyKey: NativeBackend.idempotencyKey(
                    sessionID: sessionID, index: index, sha256: hashes[index], attempt: 0))
        }

        func description(_ backend: NativeBackend, contentID: Bool = false) throws -> UploadDescription {
            let layout = try PartLayout(
                objectSize: Int64(content.count), preferred: NativeLiveTests.chunkSize,
                capabilities: backend.capabilities)
            return UploadDescription(
                size: Int64(content.count), layout: layout, chainSessionID: sessionID,
                contentID: contentID ? ACI(digest: sha256).description : nil)
        }

        var summary: CompletionSummary {
            CompletionSummary(
                parts: (0..<count).map { PartReceipt(index: $0, length: part($0).length) }, fileSHA256: sha256,
                merkleRoot: root, chainHead: head)
        }
    }

    static func text(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        let words = ["aether ", "receiver ", "chunk ", "merkle ", "parity ", "zstd "]
        var out: [UInt8] = []
        while out.count < count { out += Array(words[Int(generator.next() % UInt64(words.count))].utf8) }
        return Array(out.prefix(count))
    }

    /// The native backend the detector builds for the fixture's receiver.
    static func detect(_ fixture: ReceiverFixture, options: NativeBackendOptions = NativeBackendOptions())
        async throws -> NativeBackend
    {
        let detected = try await BackendDetector(
            client: fixture.client, options: BackendDetector.Options(native: options)
        ).detect(fixture.uploadsURL)
        #expect(detected.mode == .native)
        #expect(detected.fallbackReason == nil)
        return try #require(detected.backend as? NativeBackend)
    }

    /// A backend whose answers pass through `alter` (a man in the middle).
    static func tampering(
        _ fixture: ReceiverFixture, _ backend: NativeBackend,
        _ alter: @escaping @Sendable (HTTPRequest, HTTPResponse) -> HTTPResponse
    ) throws -> NativeBackend {
        let client = fixture.client
        return try NativeBackend(
            creationURL: backend.creationURL, server: backend.server, options: backend.options,
            transport: { (request) async throws(TransportError) -> HTTPResponse in
                alter(request, try await client.send(request))
            })
    }

    static func sendAll(_ object: Object, _ indices: [Int], _ backend: NativeBackend, _ upload: RemoteUpload)
        async throws
    {
        try await withThrowingTaskGroup(of: PartReceipt.self) { group in
            for index in indices {
                group.addTask { try await backend.send(object.part(index), to: upload) }
            }
            var seen: Set<Int> = []
            for try await receipt in group { seen.insert(receipt.index) }
            #expect(seen == Set(indices))
        }
    }

    @Test func anObjectUploadsInParallelAndOutOfOrderAndTheReceiptMatches() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await Self.detect(fixture)
        #expect(backend.capabilities.resumeQuery == .chunkBitmap && backend.capabilities.parallelParts)
        let object = try Object(ReceiverFixture.bytes(200_000, seed: 4))
        let (upload, status) = try await backend.createUpload(try object.description(backend))
        #expect(status.chunks == object.count && status.received.setCount == 0)
        try await Self.sendAll(object, Array((0..<object.count).reversed()), backend, upload)
        // A retry of a stored chunk is acknowledged again (200 with the same receipt).
        _ = try await backend.send(object.part(3), to: upload)
        let receipt = try await backend.complete(upload, summary: object.summary)
        #expect(receipt.serverMerkleRoot == object.root)
        #expect(receipt.serverChainHead == object.head)
        #expect(receipt.serverSHA256 == object.sha256)
        #expect(try fixture.object(at: upload.location) == object.content)
        #expect(try await backend.progress(of: upload) == .chunks(Set(0..<object.count), complete: true))
        // complete is idempotent.
        #expect(try await backend.complete(upload, summary: object.summary) == receipt)
    }

    @Test func anInterruptedChunkIsResentFromTheBitmap() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await Self.detect(fixture)
        let object = try Object(ReceiverFixture.bytes(70_000, seed: 5))
        let upload = try await backend.create(try object.description(backend))
        try await Self.sendAll(object, [0, 2, 4], backend, upload)
        // Chunk 1 is cut off mid-body: headers for the whole chunk, half its bytes, then the connection closes.
        let port = try #require(UInt16(fixture.url.split(separator: ":").last ?? ""))
        let part = object.part(1)
        let request = try backend.chunkRequest(
            header: AetherChunkHeader(
                length: part.length, crc32c: part.crc32c, sha256: part.sha256, link: part.chainLink),
            body: part.body, idempotencyKey: nil)
        let path = String(upload.location.dropFirst(fixture.url.count)) + "/chunks/1"
        let connection = try RawHTTPConnection(port: port)
        var head = "PUT \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAether-Protocol: 1\r\nContent-Length: \(part.length)\r\n"
        for field in request.headers { head += "\(field.name): \(field.value)\r\n" }
        connection.send(head + "\r\n")
        connection.send(Array(Object.slice(object.content, 1).prefix(8000)))
        connection.close()
        let progress = try await backend.progress(of: upload)
        #expect(progress == .chunks([0, 2, 4], complete: false))
        let received = try await backend.received(of: upload)
        #expect(received.received == AetherReceivedHeader(chunks: 3, prefix: 1))
        #expect(received.offset == Self.chunkSize)
        guard case .chunks(let stored, _) = progress else { return }
        try await Self.sendAll(object, (0..<object.count).filter { !stored.contains($0) }, backend, upload)
        _ = try await backend.complete(upload, summary: object.summary)
        #expect(try fixture.object(at: upload.location) == object.content)
    }

    @Test func aWithheldChunkIsRebuiltFromParity() async throws {
        let fixture = try ReceiverFixture()
        let scheme = ParityScheme(data: 2, parity: 1)
        let backend = try await Self.detect(fixture, options: NativeBackendOptions(parity: scheme))
        let object = try Object(ReceiverFixture.bytes(40_000, seed: 6))
        let upload = try await backend.create(try object.description(backend))
        // Group 0 holds chunks 0 and 1; chunk 1 is withheld and its group's parity shard sent instead.
        let size = Int(Self.chunkSize)
        let data = [0, 1].map { index -> [UInt8] in
            let bytes = Object.slice(object.content, index)
            return bytes + [UInt8](repeating: 0, count: size - bytes.count)
        }
        let parity = try ReedSolomonCode(dataShards: 2, parityShards: 1, field: .gf256).encode(data)[0]
        try await Self.sendAll(object, [0, 2], backend, upload)
        let receipt = try await backend.send(
            ParityShard(
                group: 0, shard: 0, body: .bytes(parity), length: Self.chunkSize, sha256: SHA256.hash(parity),
                crc32c: CRC32C.checksum(parity)), to: upload)
        #expect(receipt.parity && receipt.index == 0)
        let status = try await backend.status(of: upload)
        #expect(status.received.setIndices == [0, 1, 2])
        #expect(status.parity?.received.setIndices == [0])
        _ = try await backend.complete(upload, summary: object.summary)
        #expect(try fixture.object(at: upload.location) == object.content)
    }

    @Test func aCompressibleChunkTravelsCompressedAndIsStoredDecoded() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await Self.detect(fixture, options: NativeBackendOptions(compression: .zstd))
        let sent = Mutex<[String]>([])
        let watched = try Self.tampering(fixture, backend) { request, response in
            if let coding = request.headers["Content-Encoding"] { sent.withLock { $0.append(coding) } }
            return response
        }
        let object = try Object(Self.text(50_000, seed: 7))
        let upload = try await watched.create(try object.description(watched))
        try await Self.sendAll(object, Array(0..<object.count), watched, upload)
        #expect(sent.withLock { $0 } == Array(repeating: "zstd", count: object.count))
        let deflate = try Self.tampering(
            fixture, try await Self.detect(fixture, options: NativeBackendOptions(compression: .deflate))
        ) { request, response in
            if let coding = request.headers["Content-Encoding"] { sent.withLock { $0.append(coding) } }
            return response
        }
        _ = try await deflate.send(object.part(0), to: upload)
        #expect(sent.withLock { $0.last } == "deflate")
        _ = try await watched.complete(upload, summary: object.summary)
        #expect(try fixture.object(at: upload.location) == object.content)
    }

    @Test func anHonestReceiverPassesAChallengeWithProofs() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await Self.detect(fixture)
        let object = try Object(ReceiverFixture.bytes(90_000, seed: 8))
        let upload = try await backend.create(try object.description(backend))
        try await Self.sendAll(object, [0, 1, 2], backend, upload)
        // Before every chunk is stored: MACs without proofs; an unstored chunk fails the check.
        func check(_ indices: [Int], hashes: [Digest32]? = nil, proofs: Bool) async throws -> Bool {
            try await ReceiverFixture.spotCheck(
                backend, upload, content: object.content, chunkSize: NativeLiveTests.chunkSize,
                hashes: hashes ?? object.hashes, indices: indices, requireProofs: proofs)
        }
        #expect(try await check([2, 0], proofs: false))
        let missing = await Self.code { _ = try await check([4], proofs: false) }
        #expect(missing?.code == .verificationFailed)
        let early = await Self.code { _ = try await check([1], proofs: true) }
        #expect(early?.code == .verificationFailed)
        try await Self.sendAll(object, Array(3..<object.count), backend, upload)
        #expect(try await check([5, 1, 3], proofs: true))
        // The client's own hashes differ from what was stored: the check fails.
        var wrong = object.hashes
        wrong[3] = SHA256.hash(Array("other".utf8))
        let failed = await Self.code { _ = try await check([3], hashes: wrong, proofs: true) }
        #expect(failed?.code == .verificationFailed)
    }

    @Test func aStoredObjectIsDedupedByProofOfPossession() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await Self.detect(fixture)
        let object = try Object(ReceiverFixture.bytes(60_000, seed: 9))
        let first = try await backend.create(try object.description(backend, contentID: true))
        try await Self.sendAll(object, Array(0..<object.count), backend, first)
        _ = try await backend.complete(first, summary: object.summary)

        let (second, status) = try await backend.createUpload(try object.description(backend, contentID: true))
        let challenge = try #require(status.possessionChallenge)
        // A prover over other bytes of the same size fails; the upload stays open for chunks.
        let other = try Object(ReceiverFixture.bytes(60_000, seed: 10))
        let wrongProver = try ProofOfPossessionProver(
            source: InMemoryPossessionSource(other.content), chunkSize: UInt32(Self.chunkSize),
            chunkHashes: other.hashes)
        let refused = try await backend.provePossession(
            second, challenge: challenge, prover: wrongProver, summary: object.summary)
        #expect(refused == nil)
        // A fresh challenge, answered from the real bytes, completes the upload with no chunk sent.
        let again = try #require(try await backend.status(of: second).possessionChallenge)
        let prover = try ProofOfPossessionProver(
            source: InMemoryPossessionSource(object.content), chunkSize: UInt32(Self.chunkSize),
            chunkHashes: object.hashes)
        let receipt = try await backend.provePossession(
            second, challenge: again, prover: prover, summary: object.summary)
        #expect(receipt?.serverSHA256 == object.sha256)
        #expect(try await backend.progress(of: second) == .chunks(Set(0..<object.count), complete: true))
    }

    @Test func aTamperedReceiptIsRefused() async throws {
        let fixture = try ReceiverFixture()
        let honest = try await Self.detect(fixture)
        let backend = try Self.tampering(fixture, honest) { request, response in
            guard request.url.hasSuffix("/complete"), let receipt = try? NativeReceipt(json: response.body) else {
                return response
            }
            var forged = receipt
            forged.merkleRoot = SHA256.hash(Array("forged".utf8))
            return HTTPResponse(
                status: response.status, headers: response.headers, informational: response.informational,
                body: forged.jsonBytes, telemetry: response.telemetry)
        }
        let object = try Object(ReceiverFixture.bytes(30_000, seed: 11))
        let upload = try await backend.create(try object.description(backend))
        try await Self.sendAll(object, [1, 0], backend, upload)
        let error = await Self.code { _ = try await backend.complete(upload, summary: object.summary) }
        #expect(error?.code == .receiptMismatch)
        #expect(error?.message.contains("merkleRoot") == true)
    }

    @Test func aBearerTokenIsRequiredAndNeverEchoed() async throws {
        let fixture = try ReceiverFixture(tokens: BearerTokens([(name: "ci", token: "live-token-0123456789")]))
        let withToken = try await Self.detect(
            fixture, options: NativeBackendOptions(bearerToken: try NativeBearerToken("live-token-0123456789")))
        let object = try Object(ReceiverFixture.bytes(20_000, seed: 12))
        let upload = try await withToken.create(try object.description(withToken))
        try await Self.sendAll(object, [0, 1], withToken, upload)
        _ = try await withToken.complete(upload, summary: object.summary)
        let wrong = try NativeBackend(
            creationURL: withToken.creationURL, server: withToken.server, client: fixture.client,
            options: NativeBackendOptions(bearerToken: try NativeBearerToken("not-the-token")))
        let error = await Self.code { _ = try await wrong.create(try object.description(wrong)) }
        #expect(error?.code == .accessDenied)
        #expect(error?.description.contains("not-the-token") == false)
        #expect(!fixture.log.all.contains { $0.contains("live-token-0123456789") || $0.contains("not-the-token") })
    }

    static func code(_ body: () async throws -> Void) async -> TransportError? {
        do {
            try await body()
            return nil
        } catch let error as TransportError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }
}
