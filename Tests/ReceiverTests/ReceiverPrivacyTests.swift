import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherSecurity
import AetherTransport
import Foundation
import Testing

/// What one client can learn about another's uploads and files over HTTP with tokens: another client's upload
/// answers exactly as an id that does not exist, on every protocol and method; a dedup probe for a file another
/// client stored answers exactly as one for a file nobody stored.
@Suite struct ReceiverPrivacyTests {
    static let tokens = [("alice", "secret-alice-token-0001"), ("bob", "secret-bob-token-00001")]
    static let alice = [("Authorization", "Bearer secret-alice-token-0001")]
    static let bob = [("Authorization", "Bearer secret-bob-token-00001")]

    /// Status, headers (the date aside) and body: everything a client sees of an answer.
    struct Answer: Equatable, CustomStringConvertible {
        let status: Int
        let headers: [String]
        let body: String

        init(_ response: HTTPResponse) {
            status = response.status
            headers = response.headers.fields.filter { $0.name.lowercased() != "date" }
                .map { "\($0.name.lowercased()): \($0.value)" }.sorted()
            body = String(decoding: response.body, as: UTF8.self)
        }

        var description: String { "\(status) \(headers) \(body)" }
    }

    /// One request of the matrix, aimed at the upload path `location`.
    struct Probe {
        let name: String
        let method: String
        let suffix: String
        let headers: [(String, String)]
        let body: [UInt8]
        /// Whether a valid request of this kind about an unknown id is 404 (a challenge body may be refused first).
        let expectsNotFound: Bool
    }

    static func probes() -> [Probe] {
        let ietf = [("Upload-Draft-Interop-Version", "8")]
        let tus = [("Tus-Resumable", "1.0.0")]
        let native = [("Aether-Protocol", "1")]
        let content = EngineFixture.NativeContent(
            bytes: ReceiverFixture.bytes(20_000, seed: 3), chunkSize: 16 * 1024, session: "privacy")
        let challenge = Array(#"{"indices":[0],"nonce":"\#(Data(count: 32).base64EncodedString())"}"#.utf8)
        return [
            Probe(name: "HEAD ietf", method: "HEAD", suffix: "", headers: ietf, body: [], expectsNotFound: true),
            Probe(name: "HEAD tus", method: "HEAD", suffix: "", headers: tus, body: [], expectsNotFound: true),
            Probe(name: "HEAD native", method: "HEAD", suffix: "", headers: native, body: [], expectsNotFound: true),
            Probe(name: "GET", method: "GET", suffix: "", headers: native, body: [], expectsNotFound: true),
            Probe(
                name: "PATCH ietf", method: "PATCH", suffix: "",
                headers: ietf + [
                    ("Content-Type", "application/partial-upload"), ("Upload-Offset", "0"), ("Upload-Complete", "?0"),
                ], body: [1, 2, 3], expectsNotFound: true),
            Probe(
                name: "PATCH tus", method: "PATCH", suffix: "",
                headers: tus + [("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", "0")],
                body: [1, 2, 3], expectsNotFound: true),
            Probe(
                name: "POST override PATCH tus", method: "POST", suffix: "",
                headers: tus + [
                    ("X-HTTP-Method-Override", "PATCH"), ("Content-Type", "application/offset+octet-stream"),
                    ("Upload-Offset", "0"),
                ], body: [1, 2, 3], expectsNotFound: true),
            Probe(name: "DELETE ietf", method: "DELETE", suffix: "", headers: ietf, body: [], expectsNotFound: true),
            Probe(name: "DELETE tus", method: "DELETE", suffix: "", headers: tus, body: [], expectsNotFound: true),
            Probe(
                name: "DELETE native", method: "DELETE", suffix: "", headers: native, body: [], expectsNotFound: true),
            Probe(
                name: "PUT chunk", method: "PUT", suffix: "/chunks/0",
                headers: ReceiverNativeAndLimitsTests.chunkHeaders(content, 0), body: content.chunks[0],
                expectsNotFound: true),
            Probe(
                name: "POST challenges", method: "POST", suffix: "/challenges",
                headers: native + [("Content-Type", AetherWire.challengeMediaType)], body: challenge,
                expectsNotFound: false),
            Probe(
                name: "POST possession", method: "POST", suffix: "/possession",
                headers: native + [("Content-Type", AetherWire.possessionMediaType)],
                body: [UInt8](repeating: 7, count: 120), expectsNotFound: false),
            Probe(
                name: "POST complete", method: "POST", suffix: "/complete",
                headers: native + [("Content-Type", AetherWire.completeMediaType)],
                body: Array(
                    #"{"chainHead":"\#(String(repeating: "0", count: 64))","fileSHA256":"\#(String(repeating: "0", count: 64))","merkleRoot":"\#(String(repeating: "0", count: 64))"}"#
                        .utf8), expectsNotFound: false),
        ]
    }

    /// Alice's open upload of each protocol; returns their paths.
    static func aliceUploads(_ fixture: ReceiverFixture) async throws -> [String] {
        let ietf = try await fixture.send(
            "POST", "/uploads",
            headers: alice + [("Upload-Draft-Interop-Version", "8"), ("Upload-Complete", "?0"), ("Upload-Length", "9")])
        let tus = try await fixture.send(
            "POST", "/uploads", headers: alice + [("Tus-Resumable", "1.0.0"), ("Upload-Length", "9")])
        let content = EngineFixture.NativeContent(
            bytes: ReceiverFixture.bytes(20_000, seed: 3), chunkSize: 16 * 1024, session: "privacy")
        let native = try await ReceiverNativeAndLimitsTests.nativeCreate(fixture, content, auth: alice)
        #expect(ietf.status == 201)
        #expect(tus.status == 201)
        return [try #require(ietf.headers["Location"]), try #require(tus.headers["Location"]), native]
    }

    @Test func anotherClientsUploadAnswersAsAnIdThatDoesNotExistOnEveryProtocolAndMethod() async throws {
        let fixture = try ReceiverFixture(tokens: try BearerTokens(Self.tokens))
        let owned = try await Self.aliceUploads(fixture)
        let unknown = "/uploads/aaaaaaaaaaaaaaaaaaaaaaaaaa"
        for location in owned {
            for probe in Self.probes() {
                let theirs = Answer(
                    try await fixture.send(
                        probe.method, location + probe.suffix, headers: Self.bob + probe.headers, body: probe.body))
                let none = Answer(
                    try await fixture.send(
                        probe.method, unknown + probe.suffix, headers: Self.bob + probe.headers, body: probe.body))
                #expect(theirs == none, "\(probe.name) on \(location)")
                if probe.expectsNotFound { #expect(theirs.status == 404, "\(probe.name) on \(location)") }
            }
        }
        // tus concatenation naming another client's partial upload.
        let partial = try await fixture.send(
            "POST", "/uploads",
            headers: Self.alice + [("Tus-Resumable", "1.0.0"), ("Upload-Length", "0"), ("Upload-Concat", "partial")])
        let partialLocation = try #require(partial.headers["Location"])
        let joinTheirs = Answer(
            try await fixture.send(
                "POST", "/uploads",
                headers: Self.bob + [("Tus-Resumable", "1.0.0"), ("Upload-Concat", "final;\(partialLocation)")]))
        let joinNone = Answer(
            try await fixture.send(
                "POST", "/uploads",
                headers: Self.bob + [("Tus-Resumable", "1.0.0"), ("Upload-Concat", "final;\(unknown)")]))
        #expect(joinTheirs == joinNone)
        #expect(joinTheirs.status == 404)
        // Nothing of alice's changed.
        for location in owned {
            let head = try await fixture.send("HEAD", location, headers: Self.alice + [("Tus-Resumable", "1.0.0")])
            #expect(head.status == 200 || head.status == 204, "\(location)")
        }
    }

    /// A native creation with `contentID` (the dedup probe: a SHA-256 and a size) by `auth`'s client.
    static func probe(
        _ fixture: ReceiverFixture, _ content: EngineFixture.NativeContent, contentID: String,
        auth: [(String, String)]
    ) async throws -> (location: String, status: NativeStatusDocument, document: [String: Any], headers: [String]) {
        let document = NativeCreateRequest(
            size: Int64(content.bytes.count), chunkSize: Int64(content.chunkSize), chunks: content.chunks.count,
            chainSessionID: content.session, contentID: contentID)
        let response = try await fixture.send(
            "POST", "/uploads",
            headers: auth + [("Aether-Protocol", "1"), ("Content-Type", AetherWire.createMediaType)],
            body: document.jsonBytes)
        #expect(response.status == 201)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let names = response.headers.fields.map { $0.name.lowercased() }.filter { $0 != "date" }.sorted()
        return (
            try #require(response.headers["Location"]), try NativeStatusDocument(json: response.body), json, names
        )
    }

    /// Stores `content` as `auth`'s client's native upload, chunks and completion over HTTP.
    static func store(_ fixture: ReceiverFixture, _ content: EngineFixture.NativeContent, auth: [(String, String)])
        async throws
    {
        let location = try await ReceiverNativeAndLimitsTests.nativeCreate(fixture, content, auth: auth)
        for index in content.chunks.indices {
            let response = try await fixture.send(
                "PUT", location + "/chunks/\(index)",
                headers: auth + ReceiverNativeAndLimitsTests.chunkHeaders(content, index), body: content.chunks[index])
            #expect(response.status == 201)
        }
        let claim = try content.claim
        let complete = try await fixture.send(
            "POST", location + "/complete",
            headers: auth + [("Aether-Protocol", "1"), ("Content-Type", AetherWire.completeMediaType)],
            body: NativeCompleteRequest(
                chainHead: claim.chainHead, fileSHA256: claim.fileSHA256, merkleRoot: claim.merkleRoot
            ).jsonBytes)
        #expect(complete.status == 200)
    }

    /// Answers the possession challenge of the upload at `location` with `bytes`; returns the answer's status.
    static func answer(
        _ fixture: ReceiverFixture, _ location: String, challenge: [UInt8], bytes: [UInt8], chunkSize: Int,
        auth: [(String, String)]
    ) async throws -> Int {
        let source = InMemoryPossessionSource(bytes)
        let prover = try ProofOfPossessionProver(
            source: source, chunkSize: UInt32(chunkSize),
            chunkHashes: try ProofOfPossessionProver.chunkHashes(of: source, chunkSize: UInt32(chunkSize)))
        let response = try prover.respond(to: try PossessionChallenge(serialized: challenge))
        return try await fixture.send(
            "POST", location + "/possession",
            headers: auth + [("Aether-Protocol", "1"), ("Content-Type", AetherWire.possessionMediaType)],
            body: response.serialized
        ).status
    }

    @Test func aDedupProbeForAFileAnotherClientStoredAnswersAsForAFileNobodyStored() async throws {
        let fixture = try ReceiverFixture(tokens: try BearerTokens(Self.tokens))
        let content = EngineFixture.NativeContent(
            bytes: ReceiverFixture.bytes(70_000, seed: 41), chunkSize: 16 * 1024, session: "dedup")
        try await Self.store(fixture, content, auth: Self.alice)
        let held = ACI(digest: SHA256.hash(content.bytes)).description
        let nobody = ACI(digest: SHA256.hash(ReceiverFixture.bytes(70_000, seed: 42))).description
        let probeHeld = try await Self.probe(fixture, content, contentID: held, auth: Self.bob)
        let probeNobody = try await Self.probe(fixture, content, contentID: nobody, auth: Self.bob)
        // One answer: the same document shape, possession null either way, the same headers.
        #expect(probeHeld.status.possessionChallenge == nil)
        #expect(probeNobody.status.possessionChallenge == nil)
        #expect(probeHeld.document["possession"] is NSNull)
        #expect(Set(probeHeld.document.keys) == Set(probeNobody.document.keys))
        #expect(probeHeld.headers == probeNobody.headers)
        #expect(probeHeld.status.state == probeNobody.status.state)
        #expect(probeHeld.status.received == probeNobody.status.received)
        // A GET of the probe says no more.
        let status = try await fixture.send("GET", probeHeld.location, headers: Self.bob + [("Aether-Protocol", "1")])
        #expect(try NativeStatusDocument(json: status.body).possessionChallenge == nil)
        // The owner's own dedup still works: challenged, proven, complete without a chunk.
        let own = try await Self.probe(fixture, content, contentID: held, auth: Self.alice)
        let challenge = try #require(own.status.possessionChallenge)
        let proven = try await Self.answer(
            fixture, own.location, challenge: challenge, bytes: content.bytes, chunkSize: content.chunkSize,
            auth: Self.alice)
        #expect(proven == 200)
        #expect(try fixture.object(at: own.location) == content.bytes)
    }

    @Test func theSharedPoolDedupsAcrossClients() async throws {
        var limits = ReceiverLimits(minimumChunkSize: 16 * 1024)
        limits.dedupAcrossClients = true
        let fixture = try ReceiverFixture(tokens: try BearerTokens(Self.tokens), limits: limits)
        let content = EngineFixture.NativeContent(
            bytes: ReceiverFixture.bytes(70_000, seed: 43), chunkSize: 16 * 1024, session: "pool")
        try await Self.store(fixture, content, auth: Self.alice)
        let held = ACI(digest: SHA256.hash(content.bytes)).description
        let probe = try await Self.probe(fixture, content, contentID: held, auth: Self.bob)
        let challenge = try #require(probe.status.possessionChallenge)
        let proven = try await Self.answer(
            fixture, probe.location, challenge: challenge, bytes: content.bytes, chunkSize: content.chunkSize,
            auth: Self.bob)
        #expect(proven == 200)
        #expect(try fixture.object(at: probe.location) == content.bytes)
        // Another chunk size has no kept digests to prove against: no challenge, the client uploads.
        let other = EngineFixture.NativeContent(bytes: content.bytes, chunkSize: 32 * 1024, session: "pool")
        #expect(try await Self.probe(fixture, other, contentID: held, auth: Self.bob).status.possessionChallenge == nil)
    }
}
