import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// A cut chunk's continuation (`docs/PROTOCOL.md` 3.2.2) over HTTP: the capability, a body cut on its connection
/// parking the prefix, the status document's `partials` when asked, the 409 that names what the receiver holds before
/// any byte is read, a continuation that completes the object, and `NativeBackend` doing the same.
@Suite struct ReceiverContinuationTests {
    typealias Content = EngineFixture.NativeContent

    /// 6 chunks of 16 KiB, the last 1,696 bytes.
    static func content(seed: UInt64) -> Content { ReceiverNativeRunTests.content(seed: seed) }

    /// Sends the headers of chunk `index` whole and `count` of its bytes on a raw connection, then closes it.
    static func cut(_ fixture: ReceiverFixture, _ location: String, _ content: Content, _ index: Int, count: Int) {
        let header = ReceiverNativeRunTests.runHeader(content, index..<index + 1).fieldValue
        guard let connection = try? RawHTTPConnection(port: fixture.server.http.port) else {
            Issue.record("no connection to the receiver")
            return
        }
        connection.send(
            "PUT \(Self.path(location))/chunks/\(index) HTTP/1.1\r\nHost: 127.0.0.1\r\nAether-Protocol: 1\r\n"
                + "Aether-Chunk: \(header)\r\nContent-Length: \(content.chunks[index].count)\r\n\r\n")
        connection.send(Array(content.chunks[index].prefix(count)))
        connection.close()
    }

    /// The path of a location (absolute or not).
    static func path(_ location: String) -> String {
        guard let scheme = location.range(of: "://") else { return location }
        let rest = location[scheme.upperBound...]
        return String(rest[(rest.firstIndex(of: "/") ?? rest.endIndex)...])
    }

    static func status(_ fixture: ReceiverFixture, _ location: String, partials: Bool) async throws
        -> NativeStatusDocument
    {
        let ask: [(String, String)] = partials ? [(AetherWire.partialsRequestField, "?1")] : []
        let response = try await fixture.send("GET", location, headers: [("Aether-Protocol", "1")] + ask)
        #expect(response.status == 200)
        return try NativeStatusDocument(json: response.body)
    }

    /// Waits (up to 60 s: a loaded machine) until the receiver has kept the cut request's prefix of chunk `index`
    /// (its partials counter moved: a request still open is listed too, with what it has read so far) and lists it.
    static func waitForPartial(_ fixture: ReceiverFixture, _ location: String, _ index: Int) async throws
        -> NativeStatusDocument.Partial
    {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if try await metric(fixture, "aether_chunk_partials_kept_total") ?? 0 >= 1,
                let partial = try await status(fixture, location, partials: true).partials?.first(where: {
                    $0.index == index
                })
            {
                return partial
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw POSIXError(.ETIMEDOUT)
    }

    static func metric(_ fixture: ReceiverFixture, _ name: String) async throws -> Int? {
        let text = String(decoding: try await fixture.send("GET", "/metrics").body, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    @Test func theDirectoryStoreAdvertisesResumeChunk() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await NativeBackend.discover(creationURL: fixture.uploadsURL, client: fixture.client)
        #expect(backend.server.resumesChunks)
        var limits = ReceiverLimits(minimumChunkSize: 16 * 1024)
        limits.maximumPartials = 0
        let none = try ReceiverFixture(limits: limits)
        let other = try await NativeBackend.discover(creationURL: none.uploadsURL, client: none.client)
        #expect(!other.server.resumesChunks)
    }

    @Test func aCutBodyIsListedWhenAskedAndAContinuationCompletesTheObject() async throws {
        let fixture = try ReceiverFixture()
        let content = Self.content(seed: 11)
        let location = try await ReceiverNativeAndLimitsTests.nativeCreate(fixture, content)
        Self.cut(fixture, location, content, 2, count: 9000)
        let partial = try await Self.waitForPartial(fixture, location, 2)
        #expect(partial == .init(index: 2, received: 9000))
        // A client that does not ask gets the document it always parsed.
        #expect(try await Self.status(fixture, location, partials: false).partials == nil)
        #expect(try await Self.metric(fixture, "aether_chunk_partials_kept_total") == 1)
        var header = ReceiverNativeRunTests.runHeader(content, 2..<4)
        header.from = 8000
        let wrong = try await ReceiverNativeRunTests.sendRun(
            fixture, location, first: 2, field: header.fieldValue,
            body: Array((content.chunks[2].dropFirst(8000) + content.chunks[3])))
        #expect(wrong.status == 409)
        #expect(try ReceiverFixture.problem(wrong).name == "partial-mismatch")
        #expect(wrong.headers[AetherWire.partialField] == "index=2, received=9000")
        header.from = 9000
        let right = try await ReceiverNativeRunTests.sendRun(
            fixture, location, first: 2, field: header.fieldValue,
            body: Array((content.chunks[2].dropFirst(9000) + content.chunks[3])))
        #expect(right.status == 201)
        let receipt = try AetherRunReceiptHeader(parsing: right.headers["Aether-Run-Receipt"] ?? "")
        #expect(receipt == AetherRunReceiptHeader(index: 2, sha256: Array(content.hashes[2..<4])))
        #expect(try await Self.status(fixture, location, partials: true).partials == [])
        #expect(try await Self.metric(fixture, "aether_chunk_continuations_total{outcome=\"stored\"}") == 1)
        for range in [0..<2, 4..<6] {
            let sent = try await ReceiverNativeRunTests.sendRun(
                fixture, location, first: range.lowerBound,
                field: ReceiverNativeRunTests.runHeader(content, range).fieldValue,
                body: Array(content.chunks[range].joined()))
            #expect(sent.status == 201)
        }
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

    @Test func aContinuationWithoutAPartialOrWithTheWrongLengthIsRefusedBeforeItsBody() async throws {
        let fixture = try ReceiverFixture()
        let content = Self.content(seed: 12)
        let location = try await ReceiverNativeAndLimitsTests.nativeCreate(fixture, content)
        var header = ReceiverNativeRunTests.runHeader(content, 1..<2)
        header.from = 100
        let body = Array(content.chunks[1].dropFirst(100))
        let none = try await ReceiverNativeRunTests.sendRun(
            fixture, location, first: 1, field: header.fieldValue, body: body)
        #expect(none.status == 409)
        #expect(none.headers[AetherWire.partialField] == "index=1, received=0")
        // The body must be the chunks less the prefix; `from` past the first chunk is malformed.
        let long = try await ReceiverNativeRunTests.sendRun(
            fixture, location, first: 1, field: header.fieldValue, body: content.chunks[1])
        #expect(long.status == 422)
        var past = ReceiverNativeRunTests.runHeader(content, 1..<3)
        past.from = Int64(content.chunkSize + 10)
        let outside = try await ReceiverNativeRunTests.sendRun(
            fixture, location, first: 1, field: past.fieldValue,
            body: Array(content.chunks[2].dropFirst(10)))
        #expect(outside.status == 400)
        #expect(try await Self.status(fixture, location, partials: true).received.setIndices.isEmpty)
    }

    @Test func theNativeBackendLearnsThePrefixAndContinuesFromIt() async throws {
        let fixture = try ReceiverFixture()
        let (backend, content, upload) = try await ReceiverNativeRunTests.created(fixture, seed: 13)
        Self.cut(fixture, upload.location, content, 0, count: 12_000)
        _ = try await Self.waitForPartial(fixture, upload.location, 0)
        let holdings = try await backend.holdings(of: upload)
        #expect(holdings == RunHoldings(progress: .chunks([], complete: false), prefixes: [0: 12_000]))
        func part(_ index: Int) -> UploadPart {
            UploadPart(
                index: index, offset: Int64(index * content.chunkSize), body: .bytes(content.chunks[index]),
                length: Int64(content.chunks[index].count), sha256: content.hashes[index],
                crc32c: CRC32C.checksum(content.chunks[index]), chainLink: content.links[index])
        }
        let stale = try await backend.send(run: [part(0), part(1)], from: 11_000, to: upload)
        #expect(stale.heldPrefix == 12_000)
        let outcome = try await backend.send(run: [part(0), part(1)], from: 12_000, to: upload)
        #expect(outcome.receipts.map(\.index) == [0, 1])
        #expect(try await ReceiverNativeRunTests.received(fixture, location: upload.location) == [0, 1])
    }

    /// `chainLink` is in a status document only when the request asks for it (`Aether-Chain-Link: ?1`): clients
    /// built before it parse the document strictly and failed every status answer that carried it (an upload of
    /// such a client ended "status document is malformed (unknownMember, member chainLink)" after its last chunk).
    /// The native backend asks for it, so resume level 3 still reads it.
    @Test func theChainLinkIsInTheStatusDocumentOnlyWhenAskedFor() async throws {
        let fixture = try ReceiverFixture()
        let (backend, content, upload) = try await ReceiverNativeRunTests.created(fixture, seed: 17)
        _ = try await backend.send(
            UploadPart(
                index: 0, offset: 0, body: .bytes(content.chunks[0]), length: Int64(content.chunks[0].count),
                sha256: content.hashes[0], crc32c: CRC32C.checksum(content.chunks[0]), chainLink: content.links[0]),
            to: upload)
        let plain = try await fixture.send("GET", upload.location, headers: [("Aether-Protocol", "1")])
        #expect(plain.status == 200)
        #expect(!String(decoding: plain.body, as: UTF8.self).contains("chainLink"))
        #expect(try NativeStatusDocument(json: plain.body).chainVerifiedThrough == 0)
        let asked = try await fixture.send(
            "GET", upload.location, headers: [("Aether-Protocol", "1"), (AetherWire.chainLinkRequestField, "?1")])
        #expect(try NativeStatusDocument(json: asked.body).chainLink == content.links[0])
        #expect(try await backend.status(of: upload).chainLink == content.links[0])
    }
}
