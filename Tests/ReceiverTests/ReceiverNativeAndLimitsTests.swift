import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// The native protocol over HTTP, the bad-input matrix (status, problem, and a store unchanged), auth, the
/// loopback rule, `/healthz` and `/metrics`.
@Suite struct ReceiverNativeAndLimitsTests {
    typealias Content = EngineFixture.NativeContent

    static func nativeCreate(_ fixture: ReceiverFixture, _ content: Content, auth: [(String, String)] = [])
        async throws -> String
    {
        let document = NativeCreateRequest(
            size: Int64(content.bytes.count), chunkSize: Int64(content.chunkSize), chunks: content.chunks.count,
            chainSessionID: content.session)
        let response = try await fixture.send(
            "POST", "/uploads",
            headers: auth + [("Aether-Protocol", "1"), ("Content-Type", AetherWire.createMediaType)],
            body: document.jsonBytes)
        #expect(response.status == 201)
        #expect(response.headers["Aether-Protocol"] == "1")
        let status = try NativeStatusDocument(json: response.body)
        #expect(status.state == .open)
        return try #require(response.headers["Location"])
    }

    static func chunkHeaders(_ content: Content, _ index: Int, sent: [UInt8]? = nil) -> [(String, String)] {
        let descriptor = content.descriptor(index)
        let header = AetherChunkHeader(
            length: Int64(descriptor.length), crc32c: descriptor.crc32c, sha256: descriptor.sha256,
            link: descriptor.link)
        return [
            ("Aether-Protocol", "1"), ("Aether-Chunk", header.fieldValue),
            (
                "Content-Digest",
                "sha-256=" + StructuredField.serialize(SHA256.hash(sent ?? content.chunks[index]).bytes)
            ),
        ]
    }

    @Test func aNativeUploadWithACompressedChunkCompletesWithTheReceiversReceipt() async throws {
        let fixture = try ReceiverFixture()
        let content = Content(bytes: ReceiverFixture.bytes(40_000, seed: 21), chunkSize: 16 * 1024, session: "n1")
        let location = try await Self.nativeCreate(fixture, content)
        // Chunk 1 travels zstd-coded, the others plain, out of order.
        let coded = try ContentEncoder.encode(content.chunks[1], .zstd)
        let compressed = try await fixture.send(
            "PUT", location + "/chunks/1",
            headers: Self.chunkHeaders(content, 1, sent: coded) + [("Content-Encoding", "zstd")], body: coded)
        #expect(compressed.status == 201)
        #expect(
            try AetherReceiptHeader(parsing: compressed.headers["Aether-Receipt"] ?? "")
                == AetherReceiptHeader(index: 1, sha256: content.hashes[1]))
        for index in [2, 0] {
            let response = try await fixture.send(
                "PUT", location + "/chunks/\(index)", headers: Self.chunkHeaders(content, index),
                body: content.chunks[index])
            #expect(response.status == 201)
        }
        let retry = try await fixture.send(
            "PUT", location + "/chunks/0", headers: Self.chunkHeaders(content, 0), body: content.chunks[0])
        #expect(retry.status == 200)
        let head = try await fixture.send("HEAD", location, headers: [("Aether-Protocol", "1")])
        #expect(head.headers["Upload-Offset"] == "40000")
        #expect(head.headers["Aether-Received"] == "chunks=3, prefix=3")
        let claim = try content.claim
        let complete = try await fixture.send(
            "POST", location + "/complete",
            headers: [("Aether-Protocol", "1"), ("Content-Type", AetherWire.completeMediaType)],
            body: NativeCompleteRequest(
                chainHead: claim.chainHead, fileSHA256: claim.fileSHA256, merkleRoot: claim.merkleRoot
            ).jsonBytes)
        #expect(complete.status == 200)
        let receipt = try NativeReceipt(json: complete.body)
        #expect(receipt.fileSHA256 == SHA256.hash(content.bytes))
        #expect(receipt.merkleRoot == claim.merkleRoot)
        #expect(try fixture.object(at: location) == content.bytes)
        let nonce = [UInt8](repeating: 7, count: 32)
        let items = try content.items([0, 2])
        let challengeHeaders = [("Aether-Protocol", "1"), ("Content-Type", AetherWire.challengeMediaType)]
        let challenge = try await fixture.send(
            "POST", location + "/challenges", headers: challengeHeaders,
            body: NativeChallengeRequest(items: items, nonce: nonce).jsonBytes)
        #expect(challenge.status == 200)
        let answer = try NativeChallengeAnswer(json: challenge.body)
        #expect(answer.answers.map(\.sha256) == [content.hashes[0], content.hashes[2]])
        let id = try UploadID(String(location.split(separator: "/").last ?? ""))
        #expect(try answer.answers.map(\.mac) == items.map { try content.mac($0, nonce: nonce, id: id) })
        // A version-1 challenge (hashes only) is refused with its own problem, never answered as version 2.
        let old = try await fixture.send(
            "POST", location + "/challenges", headers: challengeHeaders,
            body: Array("{\"indices\":[0],\"nonce\":\"\(Data(nonce).base64EncodedString())\"}".utf8))
        #expect(old.status == 400)
        #expect(try ReceiverFixture.problem(old).name == "challenge-version")
    }

    @Test func theSpotCheckBoundIsAdvertisedAndARequestOverItIsRefusedBeforeAnyRead() async throws {
        var limits = ReceiverLimits(minimumChunkSize: 16 * 1024)
        limits.maximumChallengeBytes = 20_000
        let fixture = try ReceiverFixture(limits: limits)
        let options = try await fixture.send("OPTIONS", "/uploads")
        let capabilities = try AetherCapabilities(parsing: options.headers["Aether-Capabilities"] ?? "")
        #expect(capabilities.challengeVersion == 2 && capabilities.maximumChallengeBytes == 20_000)
        #expect(capabilities.answersSpotChecks)
        let content = Content(bytes: ReceiverFixture.bytes(40_000, seed: 4), chunkSize: 16 * 1024, session: "bound")
        let location = try await Self.nativeCreate(fixture, content)
        for index in 0..<3 {
            let response = try await fixture.send(
                "PUT", location + "/chunks/\(index)", headers: Self.chunkHeaders(content, index),
                body: content.chunks[index])
            #expect(response.status == 201)
        }
        let nonce = [UInt8](repeating: 8, count: 32)
        let headers = [("Aether-Protocol", "1"), ("Content-Type", AetherWire.challengeMediaType)]
        let over = try await fixture.send(
            "POST", location + "/challenges", headers: headers,
            body: NativeChallengeRequest(items: try content.items([0, 1]), nonce: nonce).jsonBytes)
        #expect(over.status == 413)
        #expect(try ReceiverFixture.problem(over).name == "challenge-too-large")
        let within = try await fixture.send(
            "POST", location + "/challenges", headers: headers,
            body: NativeChallengeRequest(items: try content.items([1]), nonce: nonce).jsonBytes)
        #expect(within.status == 200)
        let past = try await fixture.send(
            "POST", location + "/challenges", headers: headers,
            body: NativeChallengeRequest(
                items: [try ByzantineChallenge.Item(index: 2, offset: 7000, length: 1000)], nonce: nonce
            ).jsonBytes)
        #expect(past.status == 400)
    }

    @Test func aDecompressionBombIsStoppedAt413() async throws {
        let fixture = try ReceiverFixture()
        let content = Content(bytes: ReceiverFixture.bytes(16 * 1024, seed: 2), chunkSize: 16 * 1024, session: "b")
        let location = try await Self.nativeCreate(fixture, content)
        let bomb = try ContentEncoder.encode([UInt8](repeating: 0, count: 4 << 20), .zstd)
        let before = try fixture.storeSnapshot()
        let response = try await fixture.send(
            "PUT", location + "/chunks/0",
            headers: Self.chunkHeaders(content, 0, sent: bomb) + [("Content-Encoding", "zstd")], body: bomb)
        #expect(response.status == 413)
        #expect(try ReceiverFixture.problem(response).name == "too-large")
        #expect(try fixture.storeSnapshot() == before)
    }

    /// One bad request: what it sends and the status and problem it must get.
    struct BadRequest: CustomStringConvertible {
        let description: String
        let method: String
        let path: String
        let headers: [(String, String)]
        let body: [UInt8]
        let status: Int
        let problem: String?
    }

    @Test func badInputGetsTheRightStatusAndProblemAndChangesNothingStored() async throws {
        let fixture = try ReceiverFixture()
        let content = Content(bytes: ReceiverFixture.bytes(40_000, seed: 31), chunkSize: 16 * 1024, session: "bad")
        let native = try await Self.nativeCreate(fixture, content)
        let stored = try await fixture.send(
            "PUT", native + "/chunks/0", headers: Self.chunkHeaders(content, 0), body: content.chunks[0])
        #expect(stored.status == 201)
        let ietf = try await fixture.send(
            "POST", "/uploads",
            headers: [("Upload-Draft-Interop-Version", "8"), ("Upload-Complete", "?0"), ("Upload-Length", "100")],
            body: [UInt8](repeating: 1, count: 10))
        let ietfLocation = try #require(ietf.headers["Location"])
        let tus = try await fixture.send(
            "POST", "/uploads", headers: [("Tus-Resumable", "1.0.0"), ("Upload-Length", "100")])
        let tusLocation = try #require(tus.headers["Location"])
        let v8: [(String, String)] = [("Upload-Draft-Interop-Version", "8")]
        let partial: [(String, String)] = v8 + [("Content-Type", "application/partial-upload")]
        let tusAppend: [(String, String)] = [
            ("Tus-Resumable", "1.0.0"), ("Content-Type", "application/offset+octet-stream"),
        ]
        let other = ReceiverFixture.bytes(16 * 1024, seed: 99)
        let unknown = "/uploads/aaaaaaaaaaaaaaaaaaaaaaaaaa"
        let cases: [BadRequest] = [
            .init(
                description: "no protocol header", method: "POST", path: "/uploads", headers: [], body: [],
                status: 400, problem: "unknown-protocol"),
            .init(
                description: "malformed Upload-Offset", method: "PATCH", path: ietfLocation,
                headers: partial + [("Upload-Offset", "ten"), ("Upload-Complete", "?0")], body: [1], status: 400,
                problem: "malformed-request"),
            .init(
                description: "negative offset", method: "PATCH", path: ietfLocation,
                headers: partial + [("Upload-Offset", "-1"), ("Upload-Complete", "?0")], body: [1], status: 400,
                problem: "malformed-request"),
            .init(
                description: "huge offset", method: "PATCH", path: ietfLocation,
                headers: partial + [("Upload-Offset", "999999999999999"), ("Upload-Complete", "?0")], body: [1],
                status: 409, problem: "offset-mismatch"),
            .init(
                description: "two Upload-Offset lines", method: "PATCH", path: ietfLocation,
                headers: partial + [("Upload-Offset", "10"), ("Upload-Offset", "10"), ("Upload-Complete", "?0")],
                body: [1], status: 400, problem: "malformed-request"),
            .init(
                description: "wrong content type (IETF)", method: "PATCH", path: ietfLocation,
                headers: v8 + [("Content-Type", "text/plain"), ("Upload-Offset", "10"), ("Upload-Complete", "?0")],
                body: [1], status: 415, problem: "unsupported-media-type"),
            .init(
                description: "interop version 7", method: "PATCH", path: ietfLocation,
                headers: [("Upload-Draft-Interop-Version", "7"), ("Content-Type", "application/partial-upload")],
                body: [1], status: 400, problem: "malformed-request"),
            .init(
                description: "body past Upload-Length", method: "PATCH", path: ietfLocation,
                headers: partial + [("Upload-Offset", "10"), ("Upload-Complete", "?0")],
                body: [UInt8](repeating: 2, count: 200), status: 413, problem: "too-large"),
            .init(
                description: "Content-Digest mismatch", method: "PATCH", path: ietfLocation,
                headers: partial + [
                    ("Upload-Offset", "10"), ("Upload-Complete", "?0"),
                    ("Content-Digest", "sha-256=" + StructuredField.serialize(SHA256.hash([9]).bytes)),
                ], body: [1, 2, 3], status: 422, problem: "digest-mismatch"),
            .init(
                description: "wrong content type (tus)", method: "PATCH", path: tusLocation,
                headers: [("Tus-Resumable", "1.0.0"), ("Upload-Offset", "0")], body: [1], status: 415,
                problem: "unsupported-media-type"),
            .init(
                description: "tus offset with a sign", method: "PATCH", path: tusLocation,
                headers: tusAppend + [("Upload-Offset", "+0")], body: [1], status: 400, problem: "malformed-request"),
            .init(
                description: "tus offset mismatch", method: "PATCH", path: tusLocation,
                headers: tusAppend + [("Upload-Offset", "5")], body: [1], status: 409, problem: "offset-mismatch"),
            .init(
                description: "bad tus metadata", method: "POST", path: "/uploads",
                headers: [("Tus-Resumable", "1.0.0"), ("Upload-Length", "1"), ("Upload-Metadata", "name !!!")],
                body: [], status: 400, problem: "malformed-request"),
            .init(
                description: "traversal in tus metadata key", method: "POST", path: "/uploads",
                headers: [("Tus-Resumable", "1.0.0"), ("Upload-Length", "1"), ("Upload-Metadata", "../x eA==")],
                body: [], status: 201, problem: nil),
            .init(
                description: "size over the limit", method: "POST", path: "/uploads",
                headers: [("Tus-Resumable", "1.0.0"), ("Upload-Length", "999999999999999999")], body: [],
                status: 413, problem: "too-large"),
            .init(
                description: "unknown id", method: "HEAD", path: unknown, headers: v8, body: [], status: 404,
                problem: nil),
            .init(
                description: "malformed id", method: "PATCH", path: "/uploads/NOTANID", headers: partial, body: [1],
                status: 404, problem: "not-found"),
            .init(
                description: "encoded slash", method: "GET", path: "/uploads/x%2f..%2fcatalog.sqlite3", headers: [],
                body: [], status: 400, problem: "malformed-request"),
            .init(
                description: "chunk index out of range", method: "PUT", path: native + "/chunks/3",
                headers: Self.chunkHeaders(content, 2), body: content.chunks[2], status: 400,
                problem: "malformed-request"),
            .init(
                description: "chunk index with a leading zero", method: "PUT", path: native + "/chunks/01",
                headers: Self.chunkHeaders(content, 1), body: content.chunks[1], status: 400,
                problem: "malformed-request"),
            .init(
                description: "duplicate chunk with other bytes", method: "PUT", path: native + "/chunks/0",
                headers: [
                    ("Aether-Protocol", "1"),
                    (
                        "Aether-Chunk",
                        AetherChunkHeader(
                            length: Int64(other.count), crc32c: CRC32C.checksum(other), sha256: SHA256.hash(other)
                        ).fieldValue
                    ),
                ], body: other, status: 409, problem: "duplicate-chunk"),
            .init(
                description: "chunk bytes that do not match", method: "PUT", path: native + "/chunks/1",
                headers: Self.chunkHeaders(content, 1, sent: other), body: other, status: 422,
                problem: "digest-mismatch"),
            .init(
                description: "malformed Aether-Chunk", method: "PUT", path: native + "/chunks/1",
                headers: [("Aether-Protocol", "1"), ("Aether-Chunk", "length=x")], body: other, status: 400,
                problem: "malformed-request"),
            .init(
                description: "malformed native document", method: "POST", path: "/uploads",
                headers: [("Aether-Protocol", "1"), ("Content-Type", AetherWire.createMediaType)],
                body: Array("{\"size\":1}".utf8), status: 400, problem: "malformed-request"),
            .init(
                description: "incomplete completion", method: "POST", path: native + "/complete",
                headers: [("Aether-Protocol", "1"), ("Content-Type", AetherWire.completeMediaType)],
                body: try NativeCompleteRequest(
                    chainHead: content.claim.chainHead, fileSHA256: content.claim.fileSHA256,
                    merkleRoot: content.claim.merkleRoot
                ).jsonBytes, status: 409, problem: "incomplete"),
            .init(
                description: "method not allowed", method: "PUT", path: "/uploads", headers: [], body: [], status: 405,
                problem: "malformed-request"),
        ]
        for bad in cases where bad.status != 201 {
            let before = try fixture.storeSnapshot()
            let response = try await fixture.send(bad.method, bad.path, headers: bad.headers, body: bad.body)
            #expect(response.status == bad.status, "\(bad)")
            if let problem = bad.problem {
                #expect((try? ReceiverFixture.problem(response).name) == problem, "\(bad)")
            }
            #expect(try fixture.storeSnapshot() == before, "\(bad)")
        }
        // A metadata key is never a path: the upload is named by its id only.
        for bad in cases where bad.status == 201 {
            let response = try await fixture.send(bad.method, bad.path, headers: bad.headers, body: bad.body)
            #expect(response.status == 201, "\(bad)")
            #expect(try fixture.storeSnapshot().keys.allSatisfy { !$0.contains("..") })
        }
        // Stored state is unchanged: the IETF upload still holds 10 bytes, the native chunk 0 its own.
        let head = try await fixture.send("HEAD", ietfLocation, headers: v8)
        #expect(head.headers["Upload-Offset"] == "10")
        let native0 = try await fixture.send(
            "PUT", native + "/chunks/0", headers: Self.chunkHeaders(content, 0), body: content.chunks[0])
        #expect(native0.status == 200)
    }

    @Test func dotSegmentsAndEscapesInTheRawPathAreRefused() throws {
        let fixture = try ReceiverFixture()
        for path in ["/uploads/../metrics", "/uploads/./x", "/uploads//x", "/uploads/%2e%2e/catalog.sqlite3"] {
            let connection = try RawHTTPConnection(port: fixture.server.http.port)
            connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let answer = connection.receiveAll()
            #expect(answer.hasPrefix("HTTP/1.1 400 "), "\(path)")
            #expect(answer.contains("urn:aether:problem:malformed-request"), "\(path)")
        }
    }

    @Test func tokensAreRequiredAndUploadsBelongToTheirToken() async throws {
        let tokens = try BearerTokens([("alice", "secret-alice-token"), ("bob", "secret-bob-token")])
        let fixture = try ReceiverFixture(tokens: tokens)
        let v8: [(String, String)] = [("Upload-Draft-Interop-Version", "8"), ("Upload-Complete", "?0")]
        let none = try await fixture.send("POST", "/uploads", headers: v8)
        #expect(none.status == 401)
        #expect(none.headers["WWW-Authenticate"] == "Bearer")
        let wrong = try await fixture.send("POST", "/uploads", headers: v8 + [("Authorization", "Bearer nope")])
        #expect(wrong.status == 401)
        #expect(!String(decoding: wrong.body, as: UTF8.self).contains("nope"))
        let alice = try await fixture.send(
            "POST", "/uploads", headers: v8 + [("Authorization", "Bearer secret-alice-token")])
        #expect(alice.status == 201)
        let location = try #require(alice.headers["Location"])
        let bob = try await fixture.send(
            "HEAD", location,
            headers: [("Upload-Draft-Interop-Version", "8"), ("Authorization", "Bearer secret-bob-token")])
        #expect(bob.status == 404)
        let bobAppend = try await fixture.send(
            "PATCH", location,
            headers: [
                ("Upload-Draft-Interop-Version", "8"), ("Authorization", "Bearer secret-bob-token"),
                ("Content-Type", "application/partial-upload"), ("Upload-Offset", "0"), ("Upload-Complete", "?1"),
            ], body: [1, 2, 3])
        #expect(bobAppend.status == 404)
        let aliceHead = try await fixture.send(
            "HEAD", location,
            headers: [("Upload-Draft-Interop-Version", "8"), ("Authorization", "Bearer secret-alice-token")])
        #expect(aliceHead.headers["Upload-Offset"] == "0")
        let log = fixture.log.all.joined()
        #expect(!log.contains("secret-"))
        #expect(log.contains("client=alice"))
        #expect(log.contains("client=bob"))
        #expect(!tokens.description.contains("secret"))
    }

    /// A second receiver on a store in use is refused at start, before its recovery touches anything: it would
    /// have truncated the first one's append in progress and rolled back an object being completed. Once the first
    /// stops, the store can be served again.
    @Test func aSecondReceiverOnAStoreInUseIsRefusedUntilTheFirstStops() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aether-lock-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try ReceiverServer(ReceiverServer.Options(directory: FilePath(path)))
        #expect(FileManager.default.createFile(atPath: path + "/staging/kept", contents: Data("in progress".utf8)))
        let error = #expect(throws: ReceiverError.self) {
            _ = try ReceiverServer(ReceiverServer.Options(directory: FilePath(path)))
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("in use by another receiver") == true)
        // The refused receiver ran no recovery: the first one's staging is as it was.
        #expect(FileManager.default.fileExists(atPath: path + "/staging/kept"))
        first.stop()
        let second = try ReceiverServer(ReceiverServer.Options(directory: FilePath(path)))
        second.stop()
    }

    @Test func withoutTokensANonLoopbackBindIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aether-bind-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: ReceiverError.self) {
            _ = try ReceiverServer(
                ReceiverServer.Options(
                    directory: FilePath(path), http: HTTPServerConfiguration(bindAddress: "0.0.0.0")))
        }
    }

    @Test func aTokenFileReadableByOthersIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aether-tokens-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = "first-token-0123456789"
        let second = "second-token-012345678"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("alice:\(first)\n\(second)\n# c\n".utf8)))
        for mode in [0o644, 0o640, 0o660, 0o604, 0o620, 0o602] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            let refused = #expect(throws: ReceiverError.self) { try BearerTokens(contentsOf: FilePath(path)) }
            #expect(refused?.message.contains("by its group or other users") == true, "mode \(String(mode, radix: 8))")
            #expect(refused?.message.contains(first) == false)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let tokens = try BearerTokens(contentsOf: FilePath(path))
        #expect(tokens.names == ["alice", "token-2"])
        #expect(tokens.client(forAuthorization: "Bearer \(second)") == "token-2")
        #expect(tokens.client(forAuthorization: "bearer \(first)") == "alice")
        #expect(tokens.client(forAuthorization: "Bearer \(first.dropLast())") == nil)
        #expect(tokens.client(forAuthorization: "Basic \(first)") == nil)
    }

    /// A token shared by two names, a name given twice and a short token are refused, naming the line of the file
    /// and never a token.
    @Test(arguments: [
        ("alice:shared-token-0123456789\n# comment\n\nbob:shared-token-0123456789\n", "line 4", "shared-token"),
        ("alice:alice-token-0123456789\nalice:other-token-0123456789\n", "line 2", "-token-"),
        ("alice:alice-token-0123456789\n\nbob:x\n", "line 3", "bob:x"),
        ("alice:abcdefghijklmno\n", "line 1", "abcdefghijklmno"),
        ("# only\n\n", "no token", "#"),
    ])
    func aSharedTokenADuplicateNameOrAShortTokenIsRefusedNamingTheLine(
        file: String, line: String, secret: String
    ) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aether-tokens-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(file.utf8)))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let refused = #expect(throws: ReceiverError.self) { try BearerTokens(contentsOf: FilePath(path)) }
        #expect(refused?.message.contains(line) == true, "\(refused?.message ?? "")")
        #expect(refused?.message.contains(secret) == false, "\(refused?.message ?? "")")
        #expect(refused?.code == .malformedRequest)
    }

    @Test func sixteenByteTokensAreTheShortestAccepted() throws {
        #expect(throws: ReceiverError.self) { try BearerTokens([("a", String(repeating: "x", count: 15))]) }
        let tokens = try BearerTokens([("a", String(repeating: "x", count: 16))])
        #expect(tokens.client(forAuthorization: "Bearer " + String(repeating: "x", count: 16)) == "a")
        #expect(throws: ReceiverError.self) {
            try BearerTokens([("a", "token-one-0123456789"), ("b", "token-one-0123456789")])
        }
    }

    @Test func healthzAnswersOkAndMetricsParseAsPrometheusText() async throws {
        let fixture = try ReceiverFixture(logFormat: .json)
        let health = try await fixture.send("GET", "/healthz")
        #expect(health.status == 200)
        #expect(String(decoding: health.body, as: UTF8.self) == "ok\n")
        let backend = try await TusBackend.discover(
            creationURL: fixture.uploadsURL, client: fixture.client, options: TusBackendOptions(useConcatenation: false)
        )
        _ = try await ReceiverFixture.upload(ReceiverFixture.bytes(5000), partSize: 2000, backend, sha256: false)
        let response = try await fixture.send("GET", "/metrics")
        #expect(response.status == 200)
        let text = String(decoding: response.body, as: UTF8.self)
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#") {
                #expect(line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE "))
                continue
            }
            let parts = line.split(separator: " ")
            #expect(parts.count == 2, "\(line)")
            samples[String(parts[0])] = Double(parts[1])
        }
        #expect(samples["aether_uploads_started_total{protocol=\"tus\"}"] == 1)
        #expect(samples["aether_uploads_completed_total{protocol=\"tus\"}"] == 1)
        #expect(samples["aether_received_bytes_total"] == 5000)
        #expect(samples["aether_chunk_seconds_count"] == 3)
        #expect(samples["aether_chunk_seconds_bucket{le=\"+Inf\"}"] == 3)
        #expect((samples["aether_active_connections"] ?? 0) >= 1)
        // One JSON object per request line.
        let lines = fixture.log.all.filter { $0.hasPrefix("{\"bytes\"") }
        #expect(lines.count >= 5)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["method"] is String)
            #expect(object?["status"] != nil)
        }
    }
}
