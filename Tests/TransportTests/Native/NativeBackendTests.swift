import AetherIO
import AetherIntegrity
import AetherSecurity
import Foundation
import Testing

@testable import AetherTransport

/// `NativeBackend` against a scripted receiver: the bytes of every request (`docs/PROTOCOL.md` section 3), the
/// mapping of every answer to a `TransportError` code, receipts compared value by value, challenges verified with
/// Merkle proofs, possession answered with the prover, and the bearer token kept out of every message.
@Suite struct NativeBackendTests {
    static let id = "abcdefghijklmnopqrstuvwx23"
    static let location = "http://127.0.0.1:9/uploads/\(id)"
    static let chunkSize: Int64 = 16 << 10

    /// 40,000 bytes of text-like content in three chunks of 16 KiB (the last 7,232 bytes).
    struct Object {
        let bytes: [UInt8]
        let hashes: [Digest32]
        let links: [Digest32]
        let crcs: [UInt32]
        let root: Digest32
        let head: Digest32
        let sha256: Digest32

        init(size: Int = 40_000) throws {
            var generator = SplitMix64(seed: 42)
            let words = ["aether ", "chunk ", "merkle ", "parity ", "upload "]
            var bytes: [UInt8] = []
            while bytes.count < size { bytes += Array(words[Int(generator.next() % 5)].utf8) }
            self.bytes = Array(bytes.prefix(size))
            let ranges = stride(from: 0, to: size, by: Int(NativeBackendTests.chunkSize)).map {
                $0..<min($0 + Int(NativeBackendTests.chunkSize), size)
            }
            let content = self.bytes
            let hashes = ranges.map { SHA256.hash(content[$0]) }
            crcs = ranges.map { CRC32C.checksum(content[$0]) }
            var chain = try ChunkCommitmentChain(sessionID: "session-1", plannedChunkCount: ranges.count)
            links = hashes.map { chain.append($0) }
            head = chain.head
            root = try MerkleProofBuilder(chunkHashes: hashes).root
            self.hashes = hashes
            sha256 = SHA256.hash(self.bytes)
        }

        func part(_ index: Int, key: String? = nil) -> UploadPart {
            let start = index * Int(NativeBackendTests.chunkSize)
            let slice = Array(bytes[start..<min(start + Int(NativeBackendTests.chunkSize), bytes.count)])
            return UploadPart(
                index: index, offset: Int64(start), body: .bytes(slice), length: Int64(slice.count),
                sha256: hashes[index], crc32c: crcs[index], chainLink: links[index], idempotencyKey: key)
        }

        var upload: RemoteUpload {
            RemoteUpload(
                location: NativeBackendTests.location, uploadID: NativeBackendTests.id, size: Int64(bytes.count),
                partSize: NativeBackendTests.chunkSize)
        }

        var summary: CompletionSummary {
            CompletionSummary(
                parts: (0..<3).map { PartReceipt(index: $0, length: part($0).length) }, fileSHA256: sha256,
                merkleRoot: root, chainHead: head)
        }

        func receipt(_ change: (inout NativeReceipt) -> Void = { _ in }) -> NativeReceipt {
            var receipt = NativeReceipt(
                id: NativeBackendTests.id, size: Int64(bytes.count), chunks: 3, fileSHA256: sha256, merkleRoot: root,
                chainHead: head, cid: CIDv1(digest: sha256).string, completedAt: 1_796_054_400)
            change(&receipt)
            return receipt
        }

        func status(received: [Int] = [], state: NativeStatusDocument.State = .open, challenge: [UInt8]? = nil)
            -> NativeStatusDocument
        {
            NativeStatusDocument(
                id: NativeBackendTests.id, size: Int64(bytes.count), chunkSize: NativeBackendTests.chunkSize, chunks: 3,
                received: ChunkBitmap(count: 3, set: received), chainVerifiedThrough: -1, expires: 1_796_126_400,
                possessionChallenge: challenge, state: state)
        }
    }

    static func fields(_ request: HTTPRequest) -> [String] { request.headers.map { "\($0.name): \($0.value)" } }
    static func sf(_ digest: Digest32) -> String { StructuredField.serialize(digest.bytes) }

    /// The `TransportError` `body` throws, or nil; any other error is recorded as an issue.
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

    // MARK: Create

    @Test func createSendsTheCanonicalRequestWithTheTokenAndReadsTheStatus() async throws {
        let object = try Object()
        let receiver = ScriptedNativeReceiver(answers: [
            .init(
                status: 201, headers: ["Location": "/uploads/\(Self.id)", "Aether-Protocol": "1"],
                body: object.status().jsonBytes)
        ])
        let backend = try receiver.backend(
            options: NativeBackendOptions(bearerToken: try NativeBearerToken("tok.EN-1")))
        let layout = try PartLayout(
            objectSize: 40_000, preferred: Self.chunkSize, capabilities: backend.capabilities)
        let created = try await backend.createUpload(
            UploadDescription(
                size: 40_000, layout: layout, chainSessionID: "session-1",
                contentID: "aci:1:sha256:\(object.sha256.hex)"))
        #expect(created.upload.location == Self.location)
        #expect(created.upload.uploadID == Self.id)
        #expect(created.upload.partSize == Self.chunkSize)
        #expect(created.upload.expires == 1_796_126_400)
        let request = try #require(receiver.requests.first)
        #expect(request.method == "POST")
        #expect(request.url == ScriptedNativeReceiver.creationURL)
        #expect(
            Self.fields(request) == [
                "Aether-Protocol: 1", "Authorization: Bearer tok.EN-1", "Content-Type: application/aether-upload+json",
            ])
        #expect(
            String(decoding: request.body.heldBytes ?? [], as: UTF8.self)
                == "{\"chainSessionID\":\"session-1\",\"chunkSize\":16384,\"chunks\":3,\"contentID\":\"aci:1:sha256:"
                + object.sha256.hex + "\",\"size\":40000}")
    }

    @Test func aCreationAnswerThatDisagreesOrPointsElsewhereIsAProtocolViolation() async throws {
        let object = try Object()
        var other = object.status()
        other.chunks = 1
        other.chunkSize = 65536
        for answer in [
            ScriptedNativeReceiver.Answer(
                status: 201, headers: ["Location": "http://127.0.0.2:9/uploads/x"], body: object.status().jsonBytes),
            .init(status: 201, headers: ["Location": "/uploads/x"], body: other.jsonBytes),
            .init(status: 201, body: object.status().jsonBytes),
            .init(status: 201, headers: ["Location": "/uploads/x"], body: Array("{}".utf8)),
        ] {
            let receiver = ScriptedNativeReceiver(answers: [answer])
            let backend = try receiver.backend()
            let layout = try PartLayout(
                objectSize: 40_000, preferred: Self.chunkSize, capabilities: backend.capabilities)
            let error = await Self.code {
                _ = try await backend.create(UploadDescription(size: 40_000, layout: layout, chainSessionID: "s"))
            }
            #expect(error?.code == .protocolViolation)
        }
    }

    @Test func aCreationOutsideTheReceiversLimitsIsRefusedBeforeAnythingIsSent() async throws {
        let receiver = ScriptedNativeReceiver(answers: [])
        let small = AetherCapabilities(
            minimumChunkSize: 16 << 10, maximumChunkSize: 32 << 10, maximumObjectSize: 100_000, maximumChunks: 4)
        let backend = try receiver.backend(server: small)
        let wide = BackendCapabilities(
            minimumPartSize: 1, maximumPartSize: 1 << 30, maximumParts: 1 << 20, equalParts: true,
            parallelParts: true, outOfOrderParts: true, checksums: [], resumeQuery: .chunkBitmap,
            maximumObjectSize: 1 << 40)
        let cases: [(Int64, Int64, TransportError.Code)] = [
            (200_000, 64 << 10, .tooLarge), (90_000, 16 << 10, .tooLarge), (50_000, 64 << 10, .invalidArgument),
        ]
        for (size, chunk, code) in cases {
            let layout = try PartLayout(objectSize: size, preferred: chunk, capabilities: wide)
            let error = await Self.code {
                _ = try await backend.create(UploadDescription(size: size, layout: layout, chainSessionID: "s"))
            }
            #expect(error?.code == code, "\(size) in chunks of \(chunk)")
        }
        #expect(receiver.requests.isEmpty)
        let parity = try ScriptedNativeReceiver(answers: []).backend(
            server: AetherCapabilities(parityCodes: []),
            options: NativeBackendOptions(parity: ParityScheme(data: 2, parity: 1)))
        let layout = try PartLayout(objectSize: 1 << 20, preferred: 256 << 10, capabilities: parity.capabilities)
        let error = await Self.code {
            _ = try await parity.create(UploadDescription(size: 1 << 20, layout: layout, chainSessionID: "s"))
        }
        #expect(error?.code == .protocolUnsupported)
    }

    @Test func theReceiversCapabilitiesBecomeBackendCapabilities() throws {
        let backend = try ScriptedNativeReceiver(answers: []).backend(
            server: AetherCapabilities(
                minimumChunkSize: 1 << 18, maximumChunkSize: 1 << 26, maximumObjectSize: 1 << 40,
                maximumChunks: 5000, parallel: 8))
        #expect(
            backend.capabilities
                == BackendCapabilities(
                    minimumPartSize: 1 << 18, maximumPartSize: 1 << 26, maximumParts: 5000, equalParts: true,
                    parallelParts: true, outOfOrderParts: true, checksums: [.sha256, .crc32c],
                    resumeQuery: .chunkBitmap, maximumObjectSize: 1 << 40))
        let error = #expect(throws: TransportError.self) {
            try ScriptedNativeReceiver(answers: []).backend(server: AetherCapabilities(version: 2))
        }
        #expect(error?.code == .versionUnsupported)
    }

    // MARK: Chunks

    @Test func aChunkIsSentWithExactlyTheDocumentsHeaders() async throws {
        let object = try Object()
        let key = NativeBackend.idempotencyKey(sessionID: "session-1", index: 1, sha256: object.hashes[1], attempt: 0)
        let receiver = ScriptedNativeReceiver(answers: [
            .init(status: 201, headers: [AetherWire.receiptField: "index=1, sha-256=\(Self.sf(object.hashes[1]))"])
        ])
        let receipt = try await receiver.backend().send(object.part(1, key: key), to: object.upload)
        #expect(receipt == PartReceipt(index: 1, length: 16384, checksumCRC32C: object.crcs[1]))
        let request = try #require(receiver.requests.first)
        #expect(request.method == "PUT")
        #expect(request.url == Self.location + "/chunks/1")
        let crc = object.crcs[1]
        let crcBytes = [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        #expect(
            Self.fields(request) == [
                "Aether-Protocol: 1",
                "Aether-Chunk: length=16384, crc32c=\(StructuredField.serialize(crcBytes)), sha-256="
                    + "\(Self.sf(object.hashes[1])), link=\(Self.sf(object.links[1]))",
                "Content-Digest: sha-256=\(Self.sf(object.hashes[1]))", "Idempotency-Key: \(key)",
            ])
        #expect(request.body.heldBytes == Array(object.bytes[16384..<32768]))
    }

    @Test func theIdempotencyKeyIsTheDocumentsHash() {
        // hashlib.sha256(b"session-1:3:" + sha256(b"abc").hexdigest().encode() + b":0").hexdigest()
        #expect(
            NativeBackend.idempotencyKey(
                sessionID: "session-1", index: 3, sha256: SHA256.hash(Array("abc".utf8)), attempt: 0)
                == "7938a445701d6bd971b575463f3f29770c97875891d4135335004c6adae1e76a")
    }

    @Test(arguments: [
        (409, "duplicate-chunk", TransportError.Code.conflict), (422, "digest-mismatch", .checksumMismatch),
        (422, "length-mismatch", .checksumMismatch), (410, "expired", .gone), (404, "not-found", .gone),
        (413, "too-large", .tooLarge), (400, "malformed-request", .remoteRejected),
        (401, "unauthorized", .accessDenied),
        (503, "unavailable", .throttled), (507, "storage-failed", .remoteRejected), (500, "internal", .serverFailed),
    ])
    func everyRefusalOfAChunkIsATypedErrorNamingTheProblemNotTheToken(
        status: Int, name: String, code: TransportError.Code
    )
        async throws
    {
        let object = try Object()
        let receiver = ScriptedNativeReceiver(answers: [ScriptedNativeReceiver.problem(name, status, chunk: 2)])
        let backend = try receiver.backend(options: NativeBackendOptions(bearerToken: try NativeBearerToken("s3cr3t")))
        let error = await Self.code { _ = try await backend.send(object.part(2), to: object.upload) }
        #expect(error?.code == code)
        #expect(error?.message.contains(name) == true)
        #expect(error?.message.contains("chunk 2") == true)
        #expect(error?.description.contains("s3cr3t") == false)
        #expect(error?.message.contains("detail") == false)
    }

    @Test func aReceiptForOtherBytesOrNoReceiptIsRefused() async throws {
        let object = try Object()
        let cases: [(HTTPHeaders, TransportError.Code)] = [
            ([AetherWire.receiptField: "index=0, sha-256=\(Self.sf(object.hashes[1]))"], .receiptMismatch),
            ([AetherWire.receiptField: "index=1, sha-256=\(Self.sf(object.hashes[0]))"], .protocolViolation),
            ([AetherWire.receiptField: "index=0, sha-256=\(Self.sf(object.hashes[0])), parity"], .protocolViolation),
            ([AetherWire.receiptField: "index=0"], .protocolViolation), ([:], .protocolViolation),
        ]
        for (headers, code) in cases {
            let receiver = ScriptedNativeReceiver(answers: [.init(status: 200, headers: headers)])
            let error = await Self.code { _ = try await receiver.backend().send(object.part(0), to: object.upload) }
            #expect(error?.code == code, "\(headers)")
        }
        let noLink = UploadPart(
            index: 0, offset: 0, body: .bytes([1]), length: 1, sha256: object.hashes[0], crc32c: 0)
        let error = await Self.code {
            _ = try await ScriptedNativeReceiver(answers: []).backend().send(noLink, to: object.upload)
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test func aCompressibleChunkTravelsCompressedWhenAskedAndAcceptedAndTheProbePays() async throws {
        let object = try Object()
        let receiver = ScriptedNativeReceiver { request in
            let index = Int(request.url.split(separator: "/").last ?? "") ?? 0
            return .init(
                status: 201,
                headers: [AetherWire.receiptField: "index=\(index), sha-256=\(Self.sf(object.hashes[index]))"])
        }
        let zstd = try receiver.backend(options: NativeBackendOptions(compression: .zstd))
        _ = try await zstd.send(object.part(0), to: object.upload)
        let sent = try #require(receiver.requests.last)
        #expect(sent.headers["Content-Encoding"] == "zstd")
        let coded = try #require(sent.body.heldBytes)
        #expect(coded.count < 16384)
        #expect(try ContentDecoder.decode(coded, .zstd, limit: 16384) == Array(object.bytes[0..<16384]))
        #expect(sent.headers["Content-Digest"] == "sha-256=\(Self.sf(SHA256.hash(coded)))")
        #expect(sent.headers[AetherWire.chunkField]?.contains("length=16384") == true)
        #expect(sent.headers[AetherWire.chunkField]?.contains("sha-256=\(Self.sf(object.hashes[0]))") == true)

        // Random bytes do not pay; a receiver without the coding, or no compression asked, sends plain bytes.
        var generator = SplitMix64(seed: 1)
        let random = (0..<16384).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let randomPart = UploadPart(
            index: 0, offset: 0, body: .bytes(random), length: 16384, sha256: object.hashes[0], crc32c: 0,
            chainLink: object.links[0])
        _ = try await zstd.send(randomPart, to: object.upload)
        #expect(receiver.requests.last?.headers["Content-Encoding"] == nil)
        #expect(receiver.requests.last?.body.heldBytes == random)
        let noZstd = try receiver.backend(
            server: AetherCapabilities(minimumChunkSize: 16 << 10, encodings: [.deflate]),
            options: NativeBackendOptions(compression: .zstd))
        _ = try await noZstd.send(object.part(0), to: object.upload)
        #expect(receiver.requests.last?.headers["Content-Encoding"] == nil)
        let deflate = try receiver.backend(options: NativeBackendOptions(compression: .deflate))
        _ = try await deflate.send(object.part(1), to: object.upload)
        let deflated = try #require(receiver.requests.last)
        #expect(deflated.headers["Content-Encoding"] == "deflate")
        #expect(
            try ContentDecoder.decode(deflated.body.heldBytes ?? [], .deflate, limit: 16384)
                == Array(object.bytes[16384..<32768]))
        _ = try await receiver.backend().send(object.part(1), to: object.upload)
        #expect(receiver.requests.last?.headers["Content-Encoding"] == nil)
    }

    // MARK: Parity

    @Test func aParityShardGoesToItsGroupAndShardWithoutALink() async throws {
        let object = try Object()
        let shardBytes = [UInt8](repeating: 7, count: 16384)
        let sha = SHA256.hash(shardBytes)
        let receiver = ScriptedNativeReceiver(answers: [
            .init(status: 201, headers: [AetherWire.receiptField: "index=3, sha-256=\(Self.sf(sha)), parity"]),
            .init(status: 201, headers: [AetherWire.receiptField: "index=2, sha-256=\(Self.sf(sha)), parity"]),
        ])
        let backend = try receiver.backend(options: NativeBackendOptions(parity: ParityScheme(data: 2, parity: 2)))
        let shard = ParityShard(
            group: 1, shard: 1, body: .bytes(shardBytes), length: 16384, sha256: sha,
            crc32c: CRC32C.checksum(shardBytes))
        let receipt = try await backend.send(shard, to: object.upload)
        #expect(receipt == AetherReceiptHeader(index: 3, sha256: sha, parity: true))
        let request = try #require(receiver.requests.first)
        #expect(request.url == Self.location + "/parity/1/1")
        #expect(request.headers[AetherWire.chunkField]?.contains("link=") == false)
        let wrong = await Self.code { _ = try await backend.send(shard, to: object.upload) }
        #expect(wrong?.code == .protocolViolation)
        let outside = ParityShard(group: 2, shard: 0, body: .bytes(shardBytes), length: 16384, sha256: sha, crc32c: 0)
        let error = await Self.code { _ = try await backend.send(outside, to: object.upload) }
        #expect(error?.code == .invalidArgument)
    }

    // MARK: Resume

    @Test func progressReadsTheBitmapAndAGoneUploadIsGone() async throws {
        let object = try Object()
        let receiver = ScriptedNativeReceiver(answers: [
            .init(status: 200, body: object.status(received: [0, 2]).jsonBytes),
            .init(status: 200, body: object.status(received: [0, 1, 2], state: .complete).jsonBytes),
            .init(status: 200, body: object.status(state: .expired).jsonBytes),
            ScriptedNativeReceiver.problem("not-found", 404), ScriptedNativeReceiver.problem("expired", 410),
            .init(status: 500),
        ])
        let backend = try receiver.backend()
        #expect(try await backend.progress(of: object.upload) == .chunks([0, 2], complete: false))
        #expect(try await backend.progress(of: object.upload) == .chunks([0, 1, 2], complete: true))
        for _ in 0..<3 { #expect(try await backend.progress(of: object.upload) == .gone) }
        let error = await Self.code { _ = try await backend.progress(of: object.upload) }
        #expect(error?.code == .serverFailed)
        #expect(receiver.requests.allSatisfy { $0.method == "GET" && $0.url == Self.location })
    }

    @Test func headReadsTheOffsetAndTheReceivedCounts() async throws {
        let object = try Object()
        let receiver = ScriptedNativeReceiver(answers: [
            .init(
                status: 204,
                headers: [
                    "Upload-Offset": "16384", "Upload-Complete": "?0", AetherWire.receivedField: "chunks=2, prefix=1",
                ]),
            .init(status: 204, headers: ["Upload-Offset": "16384"]),
        ])
        let backend = try receiver.backend()
        let state = try await backend.received(of: object.upload)
        #expect(state.offset == 16384)
        #expect(!state.complete)
        #expect(state.received == AetherReceivedHeader(chunks: 2, prefix: 1))
        let error = await Self.code { _ = try await backend.received(of: object.upload) }
        #expect(error?.code == .protocolViolation)
    }

    // MARK: Challenges

    /// The chunks of `object`.
    static func chunks(_ object: Object) -> [[UInt8]] {
        stride(from: 0, to: object.bytes.count, by: Int(chunkSize)).map {
            Array(object.bytes[$0..<min($0 + Int(chunkSize), object.bytes.count)])
        }
    }

    /// A receiver answering version-2 challenges: MACs over `chunks` (its stored bytes), its recorded `hashes` and,
    /// when `proofs`, proofs over them; `nonce` may change the nonce it repeats.
    static func challengeReceiver(
        chunks: [[UInt8]], hashes: [Digest32], proofs: Bool, nonce: (@Sendable ([UInt8]) -> [UInt8])? = nil
    )
        -> ScriptedNativeReceiver
    {
        ScriptedNativeReceiver { request in
            guard let body = request.body.heldBytes, let asked = try? NativeChallengeRequest(json: body),
                let builder = try? MerkleProofBuilder(chunkHashes: hashes),
                let challenge = try? ByzantineChallenge(
                    uploadID: Array(id.utf8), items: asked.items, nonce: asked.nonce)
            else { return .init(status: 400) }
            let answers = asked.items.map { item in
                let range = Array(chunks[item.index][Int(item.offset)..<Int(item.offset + item.length)])
                return NativeChallengeAnswer.Answer(
                    item: item, mac: try? challenge.response(for: item, bytes: range), sha256: hashes[item.index],
                    proof: proofs ? try? builder.proof(forLeaf: item.index) : nil)
            }
            let answer = NativeChallengeAnswer(answers: answers, nonce: nonce?(asked.nonce) ?? asked.nonce)
            return .init(status: 200, body: answer.jsonBytes)
        }
    }

    /// A fresh challenge of `object`'s upload over whole chunks `indices`.
    static func challenge(_ object: Object, _ indices: [Int]) throws -> ByzantineChallenge {
        let chunks = Self.chunks(object)
        return try ByzantineChallenge.fresh(
            uploadID: Array(id.utf8),
            items: indices.map { try ByzantineChallenge.Item(index: $0, offset: 0, length: Int64(chunks[$0].count)) })
    }

    @Test func anHonestReceiversMACsAreReturnedWithItsHashesAndProofsCheckedAgainstTheClientsTree() async throws {
        let object = try Object()
        let receiver = Self.challengeReceiver(chunks: Self.chunks(object), hashes: object.hashes, proofs: true)
        let challenge = try Self.challenge(object, [2, 0])
        let macs = try await receiver.backend().challenge(
            object.upload, challenge, chunkHashes: object.hashes, requireProofs: true)
        let chunks = Self.chunks(object)
        #expect(
            macs == [
                try challenge.response(for: challenge.items[0], bytes: chunks[2]),
                try challenge.response(for: challenge.items[1], bytes: chunks[0]),
            ])
        let request = try #require(receiver.requests.first)
        #expect(request.url == Self.location + "/challenges")
        #expect(request.headers["Content-Type"] == AetherWire.challengeMediaType)
        let sent = try NativeChallengeRequest(json: request.body.heldBytes ?? [])
        #expect(sent.items == challenge.items && sent.nonce == challenge.nonce)
    }

    @Test func aLyingReceiverFailsTheChallengeWithATypedError() async throws {
        let object = try Object()
        let chunks = Self.chunks(object)
        var tampered = object.hashes
        tampered[1] = SHA256.hash(Array("other".utf8))
        var changed = object.hashes
        changed[0] = SHA256.hash(Array("x".utf8))
        let proofOnly = changed
        let cases: [(ScriptedNativeReceiver, Bool)] = [
            (Self.challengeReceiver(chunks: chunks, hashes: tampered, proofs: true), true),
            (Self.challengeReceiver(chunks: chunks, hashes: object.hashes, proofs: false), true),
            (
                Self.challengeReceiver(
                    chunks: chunks, hashes: object.hashes, proofs: true,
                    nonce: { _ in [UInt8](repeating: 0, count: 32) }), false
            ),
        ]
        for (receiver, proofs) in cases {
            let error = await Self.code {
                _ = try await receiver.backend().challenge(
                    object.upload, try Self.challenge(object, [1]), chunkHashes: object.hashes,
                    requireProofs: proofs)
            }
            #expect(error?.code == .verificationFailed)
        }
        // The right hash for chunk 1 but a proof built over a tree where chunk 0 differs: the proof fails.
        let liar = ScriptedNativeReceiver { request in
            guard let asked = try? NativeChallengeRequest(json: request.body.heldBytes ?? []),
                let proof = try? MerkleProofBuilder(chunkHashes: proofOnly).proof(forLeaf: 1)
            else { return .init(status: 400) }
            let answer = NativeChallengeAnswer(
                answers: [.init(item: asked.items[0], mac: .zero, sha256: object.hashes[1], proof: proof)],
                nonce: asked.nonce)
            return .init(status: 200, body: answer.jsonBytes)
        }
        let error = await Self.code {
            _ = try await liar.backend().challenge(
                object.upload, try Self.challenge(object, [1]), chunkHashes: object.hashes, requireProofs: false)
        }
        #expect(error?.code == .verificationFailed)
        #expect(error?.message.contains("proof") == true)
        // A MAC missing where the chunk was acknowledged: the receiver does not hold it.
        let unstored = ScriptedNativeReceiver { request in
            guard let asked = try? NativeChallengeRequest(json: request.body.heldBytes ?? []) else {
                return .init(status: 400)
            }
            let answer = NativeChallengeAnswer(
                answers: asked.items.map { .init(item: $0, mac: nil, sha256: nil, proof: nil) }, nonce: asked.nonce)
            return .init(status: 200, body: answer.jsonBytes)
        }
        let missing = await Self.code {
            _ = try await unstored.backend().challenge(
                object.upload, try Self.challenge(object, [1]), chunkHashes: object.hashes, requireProofs: false)
        }
        #expect(missing?.code == .verificationFailed)
        #expect(missing?.message.contains("does not hold chunk 1") == true)
    }

    @Test func anOldFormatAnswerIsRefusedNeverReadAsANewOne() async throws {
        let object = try Object()
        // What a receiver of before version 2 answers: its recorded hashes and proofs, no "v" and no MAC; a server
        // that kept only the hashes can send exactly this.
        let old = ScriptedNativeReceiver { request in
            guard let body = request.body.heldBytes, let asked = try? NativeChallengeRequest(json: body),
                let builder = try? MerkleProofBuilder(chunkHashes: object.hashes),
                let proof = try? builder.proof(forLeaf: asked.items[0].index)
            else { return .init(status: 400) }
            let item = asked.items[0]
            let text =
                "{\"answers\":[{\"index\":\(item.index),\"proof\":{\"leafCount\":3,\"leafIndex\":\(item.index),"
                + "\"siblings\":[\(proof.siblings.map { "\"\($0.hex)\"" }.joined(separator: ","))]},\"sha256\":"
                + "\"\(object.hashes[item.index].hex)\"}],\"nonce\":\"\(Data(asked.nonce).base64EncodedString())\"}"
            return .init(status: 200, body: Array(text.utf8))
        }
        let error = await Self.code {
            _ = try await old.backend().challenge(
                object.upload, try Self.challenge(object, [1]), chunkHashes: object.hashes, requireProofs: true)
        }
        #expect(error?.code == .verificationFailed)
        #expect(error?.message.contains("another format than version 2") == true, "\(String(describing: error))")
    }

    @Test func aReceiverWithoutVersion2IsNotAskedAndAChallengeOverItsBoundIsNotSent() async throws {
        let object = try Object()
        let receiver = Self.challengeReceiver(chunks: Self.chunks(object), hashes: object.hashes, proofs: true)
        let old = try receiver.backend(
            server: AetherCapabilities(minimumChunkSize: 16 << 10, challengeVersion: nil, maximumChallengeBytes: nil))
        #expect(!old.server.answersSpotChecks)
        let unsupported = await Self.code {
            _ = try await old.challenge(
                object.upload, try Self.challenge(object, [0]), chunkHashes: object.hashes, requireProofs: true)
        }
        #expect(unsupported?.code == .protocolUnsupported)
        let small = try receiver.backend(
            server: AetherCapabilities(minimumChunkSize: 16 << 10, maximumChallengeBytes: 20_000))
        let tooLarge = await Self.code {
            _ = try await small.challenge(
                object.upload, try Self.challenge(object, [0, 1]), chunkHashes: object.hashes, requireProofs: true)
        }
        #expect(tooLarge?.code == .invalidArgument)
        #expect(receiver.requests.isEmpty)
    }

    // MARK: Complete

    @Test func completeSendsTheThreeValuesAndAcceptsAMatchingReceipt() async throws {
        let object = try Object()
        let receiver = ScriptedNativeReceiver(answers: [.init(status: 200, body: object.receipt().jsonBytes)])
        let receipt = try await receiver.backend().complete(object.upload, summary: object.summary)
        #expect(
            receipt
                == UploadReceipt(
                    location: Self.location, size: 40_000, serverSHA256: object.sha256, serverMerkleRoot: object.root,
                    serverChainHead: object.head))
        let request = try #require(receiver.requests.first)
        #expect(request.url == Self.location + "/complete")
        #expect(
            request.body.heldBytes
                == NativeCompleteRequest(chainHead: object.head, fileSHA256: object.sha256, merkleRoot: object.root)
                .jsonBytes)
    }

    @Test func aTamperedReceiptIsAChecksumMismatchNamingWhatDiffers() async throws {
        let object = try Object()
        let other = SHA256.hash(Array("other".utf8))
        let cases: [(NativeReceipt, String)] = [
            (object.receipt { $0.merkleRoot = other }, "merkleRoot"),
            (object.receipt { $0.chainHead = other }, "chainHead"),
            (object.receipt { $0.fileSHA256 = other }, "fileSHA256"), (object.receipt { $0.size = 39_999 }, "size"),
            (object.receipt { $0.chunks = 4 }, "chunks"),
            (object.receipt { $0.cid = CIDv1(digest: other).string }, "cid"),
            (object.receipt { $0.id = "zzzzzzzzzzzzzzzzzzzzzzzzzz" }, "id"),
        ]
        for (receipt, name) in cases {
            let receiver = ScriptedNativeReceiver(answers: [.init(status: 200, body: receipt.jsonBytes)])
            let error = await Self.code {
                _ = try await receiver.backend().complete(object.upload, summary: object.summary)
            }
            #expect(error?.code == .receiptMismatch)
            #expect(error?.message.contains(name) == true, "\(name)")
        }
    }

    @Test func completionRefusalsMapToTypedErrors() async throws {
        let object = try Object()
        let cases: [(ScriptedNativeReceiver.Answer, TransportError.Code)] = [
            (ScriptedNativeReceiver.problem("incomplete", 409), .conflict),
            (ScriptedNativeReceiver.problem("merkle-mismatch", 422, chunk: 1), .checksumMismatch),
            (ScriptedNativeReceiver.problem("chain-broken", 422), .checksumMismatch),
            (.init(status: 200, body: Array("{\"id\":1}".utf8)), .protocolViolation),
        ]
        for (answer, code) in cases {
            let receiver = ScriptedNativeReceiver(answers: [answer])
            let error = await Self.code {
                _ = try await receiver.backend().complete(object.upload, summary: object.summary)
            }
            #expect(error?.code == code)
        }
        var partial = object.summary
        partial.merkleRoot = nil
        let error = await Self.code {
            _ = try await ScriptedNativeReceiver(answers: []).backend().complete(object.upload, summary: partial)
        }
        #expect(error?.code == .invalidArgument)
    }

    // MARK: Possession

    @Test func possessionIsAnsweredWithTheProverAndAFailedCheckMeansUploading() async throws {
        let object = try Object()
        let source = InMemoryPossessionSource(object.bytes)
        let verifier = try ProofOfPossessionVerifier(source: source, chunkSize: 16384, chunkHashes: object.hashes)
        let prover = try ProofOfPossessionProver(source: source, chunkSize: 16384, chunkHashes: object.hashes)
        let challenge = try verifier.issueChallenge()
        let receipt = object.receipt()
        let receiver = ScriptedNativeReceiver { request in
            guard let body = request.body.heldBytes, let response = try? PossessionResponse(serialized: body),
                (try? verifier.verify(response)) != nil
            else { return ScriptedNativeReceiver.problem("possession-failed", 403) }
            return .init(status: 200, body: receipt.jsonBytes)
        }
        let backend = try receiver.backend()
        let passed = try await backend.provePossession(
            object.upload, challenge: challenge.serialized, prover: prover, summary: object.summary)
        #expect(passed?.serverMerkleRoot == object.root)
        let request = try #require(receiver.requests.first)
        #expect(request.url == Self.location + "/possession")
        #expect(request.headers["Content-Type"] == AetherWire.possessionMediaType)
        // The same challenge again is single-use: refused, so the client uploads.
        let again = try await backend.provePossession(
            object.upload, challenge: challenge.serialized, prover: prover, summary: object.summary)
        #expect(again == nil)
        let malformed = await Self.code {
            _ = try await backend.provePossession(
                object.upload, challenge: [1, 2, 3], prover: prover, summary: object.summary)
        }
        #expect(malformed?.code == .protocolViolation)
    }

    // MARK: Cancel and the token

    @Test func abortDeletesAndAGoneUploadIsAlreadyAborted() async throws {
        let object = try Object()
        let receiver = ScriptedNativeReceiver(answers: [
            .init(status: 204), ScriptedNativeReceiver.problem("expired", 410), .init(status: 500),
        ])
        let backend = try receiver.backend()
        try await backend.abort(object.upload)
        try await backend.abort(object.upload)
        let error = await Self.code { try await backend.abort(object.upload) }
        #expect(error?.code == .serverFailed)
        #expect(receiver.requests.map(\.method) == ["DELETE", "DELETE", "DELETE"])
    }

    @Test func theTokenIsNeverPrinted() throws {
        let token = try NativeBearerToken("very-secret-token")
        let options = NativeBackendOptions(bearerToken: token)
        for text in [
            "\(token)", String(reflecting: token), "\(options)", String(reflecting: options),
            "\(Mirror(reflecting: token).children.count)",
        ] {
            #expect(!text.contains("very-secret"))
        }
        var dumped = ""
        dump(token, to: &dumped)
        #expect(!dumped.contains("very-secret"))
        #expect(throws: TransportError.self) { try NativeBearerToken("two words") }
        #expect(throws: TransportError.self) { try NativeBearerToken("") }
        #expect(throws: TransportError.self) { try NativeBearerToken("a=b") }
    }

    // MARK: Detection

    @Test func theDetectorBuildsTheNativeBackendFromTheCapabilitiesAndFallsBackWhenTheyAreUnusable() throws {
        let client = try HTTPClient()
        defer { client.shutDown() }
        let detector = BackendDetector(
            client: client, options: BackendDetector.Options(headers: ["Authorization": "Bearer t"]))
        let offer = ProtocolOffer(
            status: 204, headers: [AetherWire.capabilitiesField: AetherCapabilities(parallel: 4).fieldValue])
        let backend = try #require(
            try detector.build(.native, url: ScriptedNativeReceiver.creationURL, offer: offer) as? NativeBackend)
        #expect(backend.server.parallel == 4)
        #expect(backend.options.headers["Authorization"] == "Bearer t")
        let malformed = ProtocolOffer(status: 204, headers: [AetherWire.capabilitiesField: "v=1, parallel=16"])
        let error = #expect(throws: TransportError.self) {
            try detector.build(.native, url: ScriptedNativeReceiver.creationURL, offer: malformed)
        }
        #expect(error?.code == .protocolViolation)
        #expect(error?.message.contains("min-chunk") == true)
    }
}
