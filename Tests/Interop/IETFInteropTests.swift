import AetherIO
import AetherTransport
import Foundation
import Testing

/// The IETF resumable upload backend against `peers/ietf_peer.py`, in both interop versions (6: draft-05, 8: the
/// latest draft): uploads in several appends, resumption after a connection closed mid-append, 409s, limits and
/// 413, stale upload URLs, a foreign Location, a malformed or huge header, the 104's Location after a 500.
@Suite struct IETFInteropTests {
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    static func client() throws -> HTTPClient { try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none)) }

    static func part(_ index: Int, _ content: [UInt8], _ layout: PartLayout) -> UploadPart {
        let range = layout.range(ofPart: index)
        let bytes = Array(content[Int(range.lowerBound)..<Int(range.upperBound)])
        return UploadPart(
            index: index, offset: range.lowerBound, body: .bytes(bytes), length: Int64(bytes.count),
            sha256: SHA256.hash(bytes), crc32c: CRC32C.checksum(bytes))
    }

    static func description(_ content: [UInt8], _ layout: PartLayout, sha256: Bool = false) -> UploadDescription {
        UploadDescription(
            size: Int64(content.count), layout: layout, contentType: "application/octet-stream",
            chainSessionID: "ietf-test", sha256: sha256 ? SHA256.hash(content) : nil)
    }

    static func layout(_ size: Int, _ partSize: Int64, _ backend: IETFResumableBackend) throws -> PartLayout {
        try PartLayout(objectSize: Int64(size), preferred: partSize, capabilities: backend.capabilities, alignment: 1)
    }

    static func log(_ peer: IETFPeerProcess, _ client: HTTPClient, for location: String? = nil) async throws
        -> [IETFLoggedRequest]
    {
        let response = try await client.send(HTTPRequest(url: "http://127.0.0.1:\(peer.port)/log"))
        let all = try JSONDecoder().decode([IETFLoggedRequest].self, from: Data(response.body))
        guard let location, let id = location.split(separator: "/").last else { return all }
        return all.filter { $0.path.hasSuffix(String(id)) }
    }

    static func code(_ body: () async throws -> some Any) async -> TransportError.Code? {
        do {
            _ = try await body()
            return nil
        } catch let error as TransportError {
            return error.code
        } catch {
            return nil
        }
    }

    /// Uploads `content` in parts of `partSize`, the first with the creation, and completes.
    static func upload(_ content: [UInt8], partSize: Int64, _ backend: IETFResumableBackend) async throws -> (
        RemoteUpload, UploadReceipt
    ) {
        let layout = try layout(content.count, partSize, backend)
        let (upload, first) = try await backend.create(description(content, layout), sending: part(0, content, layout))
        var receipts = [first]
        for index in 1..<layout.partCount {
            receipts.append(try await backend.send(part(index, content, layout), to: upload))
        }
        let receipt = try await backend.complete(
            upload, summary: CompletionSummary(parts: receipts, fileSHA256: SHA256.hash(content)))
        return (upload, receipt)
    }

    // MARK: Core flows, each version

    @Test(arguments: IETFInteropVersion.allCases)
    func createsAndUploadsInSeveralAppends(version: IETFInteropVersion) async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        let backend = try await IETFResumableBackend.discover(
            creationURL: peer.creationURL("normal"), client: client, version: version)
        let content = Self.bytes(10_000, seed: UInt64(version.rawValue))
        let (upload, receipt) = try await Self.upload(content, partSize: 3000, backend)
        #expect(peer.stored(upload.location).map { SHA256.hash($0) } == SHA256.hash(content))
        #expect(receipt.serverSHA256 == SHA256.hash(content))
        #expect(receipt.size == 10_000)
        #expect(upload.location.hasPrefix("http://127.0.0.1:\(peer.port)/uploads/"))
        #expect(try await backend.progress(of: upload) == .offset(10_000, complete: true))

        let log = try await Self.log(peer, client, for: upload.location)
        let patches = log.filter { $0.method == "PATCH" }
        #expect(patches.map(\.offset) == ["3000", "6000", "9000", "10000"])
        #expect(patches.map(\.complete) == ["?0", "?0", "?0", "?1"])
        #expect(patches.allSatisfy { $0.contentType == "application/partial-upload" })
        #expect(patches.allSatisfy { $0.version == String(version.rawValue) })
        #expect(
            patches[0].contentDigest
                == "sha-256=:\(Data(SHA256.hash(content[3000..<6000]).bytes).base64EncodedString()):")
        #expect(patches[3].reprDigest == "sha-256=:\(Data(SHA256.hash(content).bytes).base64EncodedString()):")
        let creations = try await Self.log(peer, client).filter {
            $0.method == "POST"
                && $0.contentDigest
                    == "sha-256=:\(Data(SHA256.hash(content[0..<3000]).bytes).base64EncodedString()):"
        }
        #expect(creations.count == 1)
        #expect(creations.first?.complete == "?0")
        #expect(creations.first?.length == "10000")
        #expect(creations.first?.version == String(version.rawValue))
    }

    @Test(arguments: IETFInteropVersion.allCases)
    func emptyObjectsAndKnownDigestsAtCreation(version: IETFInteropVersion) async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        let backend = try IETFResumableBackend(
            creationURL: peer.creationURL("normal"), client: client, version: version)
        let layout = try Self.layout(0, 1024, backend)
        let upload = try await backend.create(Self.description([], layout))
        _ = try await backend.send(Self.part(0, [], layout), to: upload)
        let receipt = try await backend.complete(
            upload, summary: CompletionSummary(parts: [], fileSHA256: SHA256.hash([UInt8]())))
        #expect(peer.stored(upload.location) == [])
        #expect(receipt.serverSHA256 == SHA256.hash([UInt8]()))

        // A Repr-Digest sent at creation that the bytes do not match: the server refuses the completion.
        let content = Self.bytes(2000, seed: 9)
        let layout2 = try Self.layout(content.count, 1000, backend)
        var wrong = Self.description(content, layout2, sha256: true)
        wrong.sha256 = SHA256.hash(content + [0])
        let created = try await backend.create(wrong)
        for index in 0..<2 { _ = try await backend.send(Self.part(index, content, layout2), to: created) }
        let failed = await Self.code {
            try await backend.complete(created, summary: CompletionSummary(parts: [], fileSHA256: SHA256.hash(content)))
        }
        #expect(failed == .remoteRejected)
    }

    @Test(arguments: IETFInteropVersion.allCases)
    func anAppendCutMidBodyResumesFromTheServersOffset(version: IETFInteropVersion) async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        let backend = try IETFResumableBackend(
            creationURL: peer.creationURL("killpatch"), client: client, version: version)
        let content = Self.bytes(8000, seed: 77)
        let (upload, _) = try await Self.upload(content, partSize: 4000, backend)
        #expect(peer.stored(upload.location).map { SHA256.hash($0) } == SHA256.hash(content))
        let log = try await Self.log(peer, client, for: upload.location)
        // The first PATCH (offset 4000, 4000 bytes) was cut after 2000: HEAD, then the rest from 6000.
        #expect(log.map(\.method).prefix(4) == ["PATCH", "HEAD", "PATCH", "HEAD"])
        #expect(log.filter { $0.method == "PATCH" }.map(\.offset) == ["4000", "6000", "8000"])
    }

    @Test(arguments: IETFInteropVersion.allCases)
    func anInterruptedUploadResumesThroughProgress(version: IETFInteropVersion) async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        let noRecovery = try IETFResumableBackend(
            creationURL: peer.creationURL("killpatch"), client: client, version: version,
            options: IETFBackendOptions(recoveryAttempts: 0))
        let content = Self.bytes(6000, seed: 78)
        let layout = try Self.layout(content.count, 3000, noRecovery)
        let upload = try await noRecovery.create(Self.description(content, layout))
        let cut = await Self.code { try await noRecovery.send(Self.part(0, content, layout), to: upload) }
        #expect(cut == .connectionClosed)
        #expect(try await noRecovery.progress(of: upload) == .offset(1500, complete: false))
        // A resumed process re-sends the part: the server's 409 and HEAD put it at 1500.
        let backend = try IETFResumableBackend(
            creationURL: peer.creationURL("killpatch"), client: client, version: version)
        _ = try await backend.send(Self.part(0, content, layout), to: upload)
        _ = try await backend.send(Self.part(1, content, layout), to: upload)
        _ = try await backend.complete(upload, summary: CompletionSummary(parts: [], fileSHA256: SHA256.hash(content)))
        #expect(peer.stored(upload.location).map { SHA256.hash($0) } == SHA256.hash(content))
        let patches = try await Self.log(peer, client, for: upload.location).filter { $0.method == "PATCH" }
        #expect(patches.map(\.offset) == ["0", "0", "1500", "3000", "6000"])
    }

    // MARK: 409

    @Test func a409WithAnotherOffsetIsFollowedOrRefused() async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        let backend = try IETFResumableBackend(creationURL: peer.creationURL("normal"), client: client)
        let content = Self.bytes(4000, seed: 5)
        let layout = try Self.layout(content.count, 2000, backend)
        let upload = try await backend.create(Self.description(content, layout))
        // Part 1 before part 0: the server holds 0 bytes, before where part 1 starts.
        let early = await Self.code { try await backend.send(Self.part(1, content, layout), to: upload) }
        #expect(early == .conflict)
        _ = try await backend.send(Self.part(0, content, layout), to: upload)
        // Part 0 again: 409, the server holds its end already, nothing is sent twice.
        _ = try await backend.send(Self.part(0, content, layout), to: upload)
        _ = try await backend.send(Self.part(1, content, layout), to: upload)
        _ = try await backend.complete(upload, summary: CompletionSummary(parts: [], fileSHA256: SHA256.hash(content)))
        #expect(peer.stored(upload.location).map { SHA256.hash($0) } == SHA256.hash(content))
        let patches = try await Self.log(peer, client, for: upload.location).filter { $0.method == "PATCH" }
        #expect(patches.map(\.offset) == ["2000", "0", "0", "2000", "4000"])

        // The server answers the first PATCH 409 without storing: HEAD, then the same PATCH again.
        let conflicted = try IETFResumableBackend(creationURL: peer.creationURL("conflict"), client: client)
        let (upload2, _) = try await Self.upload(content, partSize: 2000, conflicted)
        #expect(peer.stored(upload2.location).map { SHA256.hash($0) } == SHA256.hash(content))
        let log2 = try await Self.log(peer, client, for: upload2.location)
        #expect(log2.map(\.method).prefix(3) == ["PATCH", "HEAD", "PATCH"])
    }

    // MARK: Limits and 413

    @Test(arguments: IETFInteropVersion.allCases)
    func limitsBoundTheUploadAnd413NamesThem(version: IETFInteropVersion) async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        let start = Int64(Date().timeIntervalSince1970)
        let discovered = try await IETFResumableBackend.discover(
            creationURL: peer.creationURL("limits"), client: client, version: version)
        #expect(discovered.capabilities.maximumPartSize == 1024)
        #expect(discovered.capabilities.maximumObjectSize == 4096)
        #expect(discovered.limits?.lifetime == 3600)
        // Within the limits (parts of at most 1024 bytes): stored, and the lifetime recorded.
        let content = Self.bytes(3000, seed: 11)
        let (upload, _) = try await Self.upload(content, partSize: 4096, discovered)
        let end = Int64(Date().timeIntervalSince1970)
        #expect(peer.stored(upload.location).map { SHA256.hash($0) } == SHA256.hash(content))
        // The peer sets the expiry an hour after the creation, which happened between start and end.
        let expires = try #require(upload.expires)
        #expect(expires >= start + 3600 && expires <= end + 3601)
        // Too large for max-size: the PartLayout refuses it before any request.
        #expect(throws: TransportError.self) { try Self.layout(5000, 1024, discovered) }

        // A client that did not ask: 413 at creation, with the limits in the message.
        let blind = try IETFResumableBackend(creationURL: peer.creationURL("limits"), client: client, version: version)
        let big = Self.bytes(5000, seed: 12)
        let bigLayout = try Self.layout(big.count, 1000, blind)
        do throws(TransportError) {
            _ = try await blind.create(Self.description(big, bigLayout))
            Issue.record("a 5000-byte upload was created past max-size=4096")
        } catch {
            #expect(error.code == .tooLarge)
            #expect(error.message.contains("max-size=4096"))
        }
        // Parts larger than max-append-size: the creation answer's limits cancel the upload.
        let created = await Self.code {
            try await blind.create(Self.description(content, try Self.layout(content.count, 2000, blind)))
        }
        #expect(created == .tooLarge)
        let log = try await Self.log(peer, client)
        let refused = log.filter {
            $0.method == "POST" && $0.path == "/create/limits" && $0.version == String(version.rawValue)
                && $0.length == "3000" && $0.contentLength == "0"
        }
        let id = try #require(refused.count == 1 ? refused[0].created : nil)
        #expect(log.contains { $0.method == "DELETE" && $0.path == "/uploads/\(id)" })
        #expect(peer.stored("/uploads/\(id)") == nil)
    }

    // MARK: Stale uploads, foreign Location, bad headers, 104

    @Test func aCancelledUploadIsGone() async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        let backend = try IETFResumableBackend(creationURL: peer.creationURL("normal"), client: client)
        let content = Self.bytes(2000, seed: 3)
        let layout = try Self.layout(content.count, 1000, backend)
        let upload = try await backend.create(Self.description(content, layout))
        try await backend.abort(upload)
        #expect(peer.stored(upload.location) == nil)
        #expect(try await backend.progress(of: upload) == .gone)
        #expect(await Self.code { try await backend.send(Self.part(0, content, layout), to: upload) } == .gone)
        try await backend.abort(upload)
        // An upload whose lifetime ended is gone without asking.
        var expired = upload
        expired.expires = Int64(Date().timeIntervalSince1970) - 1
        #expect(try await backend.progress(of: expired) == .gone)
    }

    @Test func aLocationOnAnotherOriginIsRefused() async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        let backend = try IETFResumableBackend(creationURL: peer.creationURL("foreign"), client: client)
        let content = Self.bytes(100, seed: 1)
        let layout = try Self.layout(content.count, 100, backend)
        do throws(TransportError) {
            _ = try await backend.create(Self.description(content, layout))
            Issue.record("a Location on localhost was followed from 127.0.0.1")
        } catch {
            #expect(error.code == .protocolViolation)
            #expect(error.message.contains("origin"))
        }
    }

    @Test func malformedAndHugeHeadersAreRefused() async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        let content = Self.bytes(100, seed: 2)
        let huge = try IETFResumableBackend(creationURL: peer.creationURL("huge"), client: client)
        let hugeCode = await Self.code {
            try await huge.create(Self.description(content, try Self.layout(content.count, 100, huge)))
        }
        #expect(hugeCode == .headerTooLarge)
        let malformed = try IETFResumableBackend(creationURL: peer.creationURL("malformed"), client: client)
        let upload = try await malformed.create(
            Self.description(content, try Self.layout(content.count, 100, malformed)))
        #expect(await Self.code { try await malformed.progress(of: upload) } == .protocolViolation)
    }

    @Test(arguments: IETFInteropVersion.allCases)
    func a500AfterThe104ResumesAtTheAnnouncedResource(version: IETFInteropVersion) async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        let backend = try IETFResumableBackend(
            creationURL: peer.creationURL("fail104"), client: client, version: version)
        let content = Self.bytes(5000, seed: 21)
        let (upload, _) = try await Self.upload(content, partSize: 2500, backend)
        #expect(peer.stored(upload.location).map { SHA256.hash($0) } == SHA256.hash(content))
        let log = try await Self.log(peer, client, for: upload.location)
        #expect(log.map(\.method).prefix(2) == ["HEAD", "PATCH"])
        #expect(log.first { $0.method == "PATCH" }?.offset == "2500")
    }
}
