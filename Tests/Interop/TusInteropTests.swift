import AetherIO
import AetherTestSupport
import AetherTransport
import Foundation
import Testing

/// The tus 1.0 backend against `tuspyserver` (FastAPI on uvicorn) and, for the checksum extension that
/// tuspyserver does not offer and for faults, against a small tus server of our own (`peers/tus_peer.py`).
@Suite struct TusInteropTests: SeededContent {

    static func client() throws -> HTTPClient { try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none)) }

    static func bytes(of part: Int, _ content: [UInt8], _ layout: PartLayout) -> [UInt8] {
        let range = layout.range(ofPart: part)
        return Array(content[Int(range.lowerBound)..<Int(range.upperBound)])
    }

    static func part(_ index: Int, _ content: [UInt8], _ layout: PartLayout) -> UploadPart {
        let bytes = bytes(of: index, content, layout)
        return UploadPart(
            index: index, offset: layout.range(ofPart: index).lowerBound, body: .bytes(bytes),
            length: Int64(bytes.count), sha256: SHA256.hash(bytes), crc32c: CRC32C.checksum(bytes))
    }

    static func description(_ content: [UInt8], _ layout: PartLayout) -> UploadDescription {
        UploadDescription(
            size: Int64(content.count), layout: layout, contentType: "application/octet-stream",
            metadata: ["filename": "scan.bin"], chainSessionID: "tus-test")
    }

    static func summary(_ content: [UInt8], _ receipts: [PartReceipt]) -> CompletionSummary {
        CompletionSummary(parts: receipts.sorted { $0.index < $1.index }, fileSHA256: SHA256.hash(content))
    }

    static func log(_ peer: TusPeerProcess, _ client: HTTPClient) async throws -> [TusLoggedRequest] {
        let response = try await client.send(HTTPRequest(url: "http://127.0.0.1:\(peer.checksum)/log"))
        return try JSONDecoder().decode([TusLoggedRequest].self, from: Data(response.body))
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

    // MARK: tuspyserver

    @Test func discoveryReadsWhatTuspyserverOffersAndDerivesTheCapabilities() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(creationURL: peer.tusURL("files"), client: client)
        #expect(backend.server.versions == ["1.0.0"])
        #expect(
            backend.server.extensions == [
                "creation", "creation-defer-length", "creation-with-upload", "expiration", "termination",
                "concatenation",
            ])
        #expect(backend.server.maximumSize == 128_849_018_880)
        #expect(backend.checksum == nil)
        #expect(backend.capabilities.parallelParts && backend.capabilities.outOfOrderParts)
        #expect(backend.capabilities.resumeQuery == .parts)
        #expect(backend.capabilities.checksums.isEmpty)
        #expect(backend.capabilities.maximumObjectSize == 128_849_018_880)
        let sequential = try await TusBackend.discover(
            creationURL: peer.tusURL("files"), client: client, options: TusBackendOptions(useConcatenation: false))
        #expect(!sequential.capabilities.parallelParts && !sequential.capabilities.outOfOrderParts)
        #expect(sequential.capabilities.resumeQuery == .offset)
    }

    @Test func aFileUploadedInPartsLandsByteIdenticalOnTheServersDisk() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(
            creationURL: peer.tusURL("files"), client: client, options: TusBackendOptions(useConcatenation: false))
        let content = Self.bytes((1 << 20) + 123, seed: 11)
        let layout = try PartLayout(
            objectSize: Int64(content.count), preferred: 256 << 10, capabilities: backend.capabilities)
        #expect(layout.partCount == 5)
        let upload = try await backend.create(Self.description(content, layout))
        #expect(upload.location.hasPrefix("http://127.0.0.1:\(peer.tus)/files/"))
        #expect(upload.partLocations == nil)
        #expect(try #require(upload.expires) > Int64(Date().timeIntervalSince1970))
        #expect(try await backend.progress(of: upload) == .offset(0, complete: false))
        var receipts: [PartReceipt] = []
        for index in 0..<layout.partCount {
            receipts.append(try await backend.send(Self.part(index, content, layout), to: upload))
            let sent = layout.range(ofPart: index).upperBound
            #expect(try await backend.progress(of: upload) == .offset(sent, complete: sent == content.count))
        }
        let receipt = try await backend.complete(upload, summary: Self.summary(content, receipts))
        #expect(receipt.location == upload.location)
        #expect(receipt.size == Int64(content.count))
        let stored = try peer.storedOnTusServer("files", upload.location)
        #expect(SHA256.hash(stored) == SHA256.hash(content))
    }

    @Test func partsStreamedFromTheFileReadersChunksArriveByteIdentical() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(
            creationURL: peer.tusURL("files"), client: client, options: TusBackendOptions(useConcatenation: false))
        let content = Self.bytes(700_001, seed: 12)
        let file = peer.directory.appendingPathComponent("source-\(UUID().uuidString).bin")
        try Data(content).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let layout = try PartLayout(
            objectSize: Int64(content.count), preferred: 256 << 10, capabilities: backend.capabilities)
        let upload = try await backend.create(Self.description(content, layout))
        var receipts: [PartReceipt] = []
        for index in 0..<layout.partCount {
            let range = layout.range(ofPart: index)
            let reader = try FileChunkReader(
                path: file.path,
                options: ChunkReadOptions(chunkSize: 64 << 10, range: range, strategy: .pread, heldChunks: 8))
            var chunks: [Chunk] = []
            while let chunk = try reader.next() { chunks.append(chunk) }
            let bytes = Self.bytes(of: index, content, layout)
            let part = UploadPart(
                index: index, offset: range.lowerBound, body: .chunks(chunks), length: Int64(range.count),
                sha256: SHA256.hash(bytes), crc32c: CRC32C.checksum(bytes))
            receipts.append(try await backend.send(part, to: upload))
        }
        _ = try await backend.complete(upload, summary: Self.summary(content, receipts))
        #expect(SHA256.hash(try peer.storedOnTusServer("files", upload.location)) == SHA256.hash(content))
    }

    @Test func anInterruptedPartResumesFromTheOffsetTheServerReports() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(
            creationURL: peer.tusURL("files"), client: client, options: TusBackendOptions(useConcatenation: false))
        let content = Self.bytes(3 << 20, seed: 13)
        let layout = try PartLayout(
            objectSize: Int64(content.count), preferred: 1 << 20, capabilities: backend.capabilities)
        let upload = try await backend.create(Self.description(content, layout))
        var receipts = [try await backend.send(Self.part(0, content, layout), to: upload)]

        // Part 1 streamed; half of it written, then the transfer is killed.
        let range = layout.range(ofPart: 1)
        let partBytes = Self.bytes(of: 1, content, layout)
        let stream = HTTPBodyStream(length: Int64(partBytes.count), capacity: 1)
        let streamed = UploadPart(
            index: 1, offset: range.lowerBound, body: .stream(stream), length: Int64(partBytes.count),
            sha256: SHA256.hash(partBytes), crc32c: CRC32C.checksum(partBytes))
        let transfer = Task { try await backend.send(streamed, to: upload) }
        let half = partBytes.count / 2
        for start in stride(from: 0, to: half, by: 16 << 10) {
            try await stream.write(Array(partBytes[start..<min(start + (16 << 10), half)]))
        }
        transfer.cancel()
        let interrupted = await Self.code { try await transfer.value }
        #expect(interrupted == .cancelled)

        // The server records what it received when it sees the connection close; ask (HEAD) until it has.
        // (tuspyserver waits for its upload lock without yielding its event loop: a PATCH sent while the killed one
        // still holds the lock would stall the whole server.)
        var held = range.lowerBound
        for _ in 0..<400 where held == range.lowerBound {
            guard case .offset(let offset, let complete) = try await backend.progress(of: upload) else {
                Issue.record("the upload is not an offset upload")
                return
            }
            #expect(!complete)
            held = offset
            if held == range.lowerBound { try await Task.sleep(for: .milliseconds(25)) }
        }
        #expect(held > range.lowerBound)
        #expect(held <= range.lowerBound + Int64(half))

        // The part sent again from its start: 409, HEAD, and only the rest goes.
        receipts.append(try await backend.send(Self.part(1, content, layout), to: upload))
        #expect(try await backend.progress(of: upload) == .offset(range.upperBound, complete: false))
        receipts.append(try await backend.send(Self.part(2, content, layout), to: upload))
        _ = try await backend.complete(upload, summary: Self.summary(content, receipts))
        #expect(SHA256.hash(try peer.storedOnTusServer("files", upload.location)) == SHA256.hash(content))
    }

    @Test func partialUploadsSentInParallelAreConcatenatedIntoTheFinalUpload() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(
            creationURL: peer.tusURL("files"), client: client, options: TusBackendOptions(maximumPartSize: 64 << 10))
        let content = Self.bytes((300 << 10) + 77, seed: 14)
        let layout = try PartLayout(
            objectSize: Int64(content.count), preferred: 64 << 10, capabilities: backend.capabilities)
        #expect(layout.partCount == 5)
        let upload = try await backend.create(Self.description(content, layout))
        let partials = try #require(upload.partLocations)
        #expect(partials.count == 5)
        #expect(Set(partials).count == 5)
        #expect(try await backend.progress(of: upload) == .parts([]))
        let receipts = try await withThrowingTaskGroup(of: PartReceipt.self) { group in
            for index in (0..<layout.partCount).reversed() {
                group.addTask { try await backend.send(Self.part(index, content, layout), to: upload) }
            }
            var receipts: [PartReceipt] = []
            for try await receipt in group { receipts.append(receipt) }
            return receipts.sorted { $0.index < $1.index }
        }
        #expect(try await backend.progress(of: upload) == .parts(receipts))
        let receipt = try await backend.complete(upload, summary: Self.summary(content, receipts))
        #expect(receipt.location.hasPrefix("http://127.0.0.1:\(peer.tus)/files/"))
        #expect(!partials.contains(receipt.location))
        #expect(receipt.size == Int64(content.count))
        #expect(SHA256.hash(try peer.storedOnTusServer("files", receipt.location)) == SHA256.hash(content))
        // The partials are deleted once the final is verified (the server offers termination): no byte stays
        // stored twice.
        for partial in partials {
            let answer = try await client.send(
                HTTPRequest(method: "HEAD", url: partial, headers: HTTPHeaders([("Tus-Resumable", "1.0.0")])))
            #expect([404, 410].contains(answer.status), "partial \(partial) answered \(answer.status)")
            #expect(!peer.existsOnTusServer("files", partial))
        }
        #expect(SHA256.hash(try peer.storedOnTusServer("files", receipt.location)) == SHA256.hash(content))
    }

    @Test func aPartOfAPartialUploadResumesAfterAnInterruptionToo() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(
            creationURL: peer.tusURL("files"), client: client, options: TusBackendOptions(maximumPartSize: 1 << 20))
        let content = Self.bytes((2 << 20) + 5, seed: 15)
        let layout = try PartLayout(
            objectSize: Int64(content.count), preferred: 1 << 20, capabilities: backend.capabilities)
        let upload = try await backend.create(Self.description(content, layout))
        let partBytes = Self.bytes(of: 0, content, layout)
        let stream = HTTPBodyStream(length: Int64(partBytes.count), capacity: 1)
        let streamed = UploadPart(
            index: 0, offset: 0, body: .stream(stream), length: Int64(partBytes.count),
            sha256: SHA256.hash(partBytes), crc32c: CRC32C.checksum(partBytes))
        let transfer = Task { try await backend.send(streamed, to: upload) }
        for start in stride(from: 0, to: partBytes.count / 2, by: 16 << 10) {
            try await stream.write(Array(partBytes[start..<(start + (16 << 10))]))
        }
        stream.abort(reason: "the test kills the transfer")
        #expect(await Self.code { try await transfer.value } == .bodySourceFailed)
        // tuspyserver waits for its upload lock without yielding its event loop, so a PATCH sent while the killed
        // one still holds the lock stalls the whole server: ask (HEAD) until it recorded what it received.
        let partial = try #require(upload.partLocations?.first)
        var held = "0"
        for _ in 0..<400 where held == "0" {
            let head = try await client.send(
                HTTPRequest(method: "HEAD", url: partial, headers: ["Tus-Resumable": "1.0.0"]))
            held = head.headers["Upload-Offset"] ?? "0"
            if held == "0" { try await Task.sleep(for: .milliseconds(25)) }
        }
        #expect(held != "0")
        var receipts: [PartReceipt] = []
        for index in 0..<layout.partCount {
            receipts.append(try await backend.send(Self.part(index, content, layout), to: upload))
        }
        let receipt = try await backend.complete(upload, summary: Self.summary(content, receipts))
        #expect(SHA256.hash(try peer.storedOnTusServer("files", receipt.location)) == SHA256.hash(content))
    }

    @Test func creationWithUploadCarriesTheFirstPartInThePost() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        for concatenation in [false, true] {
            let backend = try await TusBackend.discover(
                creationURL: peer.tusURL("files"), client: client,
                options: TusBackendOptions(maximumPartSize: 128 << 10, useConcatenation: concatenation))
            let content = Self.bytes(300_000, seed: 16)
            let layout = try PartLayout(
                objectSize: Int64(content.count), preferred: 128 << 10, capabilities: backend.capabilities)
            let (upload, first) = try await backend.create(
                Self.description(content, layout), sending: Self.part(0, content, layout))
            #expect(first == PartReceipt(index: 0, length: layout.partSize))
            let expected: RemoteProgress =
                concatenation ? .parts([first]) : .offset(layout.partSize, complete: false)
            #expect(try await backend.progress(of: upload) == expected)
            var receipts = [first]
            for index in 1..<layout.partCount {
                receipts.append(try await backend.send(Self.part(index, content, layout), to: upload))
            }
            let receipt = try await backend.complete(upload, summary: Self.summary(content, receipts))
            #expect(SHA256.hash(try peer.storedOnTusServer("files", receipt.location)) == SHA256.hash(content))
        }
    }

    @Test func terminationDropsTheUploadAndItIsGoneAfterwards() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        for concatenation in [false, true] {
            let backend = try await TusBackend.discover(
                creationURL: peer.tusURL("files"), client: client,
                options: TusBackendOptions(maximumPartSize: 64 << 10, useConcatenation: concatenation))
            let content = Self.bytes(200_000, seed: 17)
            let layout = try PartLayout(
                objectSize: Int64(content.count), preferred: 64 << 10, capabilities: backend.capabilities)
            let upload = try await backend.create(Self.description(content, layout))
            _ = try await backend.send(Self.part(0, content, layout), to: upload)
            let resources = upload.partLocations ?? [upload.location]
            #expect(resources.allSatisfy { peer.existsOnTusServer("files", $0) })
            try await backend.abort(upload)
            #expect(resources.allSatisfy { !peer.existsOnTusServer("files", $0) })
            #expect(try await backend.progress(of: upload) == .gone)
            #expect(await Self.code { try await backend.send(Self.part(1, content, layout), to: upload) } == .gone)
            try await backend.abort(upload)  // a second termination finds nothing and is not an error
        }
    }

    @Test func anExpiredUploadIsGoneWhetherTheClockOrTheServerSaysSo() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let content = Self.bytes(1000, seed: 18)
        // The clock is past the server's Upload-Expires: the client knows without asking.
        let backend = try await TusBackend.discover(
            creationURL: peer.tusURL("expired"), client: client, options: TusBackendOptions(useConcatenation: false))
        let layout = try PartLayout(objectSize: 1000, preferred: 1000, capabilities: backend.capabilities)
        let upload = try await backend.create(Self.description(content, layout))
        #expect(try #require(upload.expires) < Int64(Date().timeIntervalSince1970))
        #expect(try await backend.progress(of: upload) == .gone)
        #expect(await Self.code { try await backend.send(Self.part(0, content, layout), to: upload) } == .gone)
        // A clock in 1970 still believes in the upload: the server's 410 says it is gone.
        let early = try await TusBackend.discover(
            creationURL: peer.tusURL("expired"), client: client,
            options: TusBackendOptions(useConcatenation: false, clock: ManualClock(wall: .zero)))
        #expect(try await early.progress(of: upload) == .gone)
        #expect(await Self.code { try await early.send(Self.part(0, content, layout), to: upload) } == .gone)
    }

    @Test func tusMaxSizeRefusesALargerUploadBeforeAnythingIsSent() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(creationURL: peer.tusURL("small"), client: client)
        #expect(backend.capabilities.maximumObjectSize == 1000)
        let content = Self.bytes(2000, seed: 19)
        let roomy = BackendCapabilities(
            minimumPartSize: 1, maximumPartSize: 4096, maximumParts: 10, equalParts: false, parallelParts: false,
            outOfOrderParts: false, checksums: [], resumeQuery: .offset, maximumObjectSize: 1 << 20)
        let layout = try PartLayout(objectSize: 2000, preferred: 2000, capabilities: roomy)
        #expect(await Self.code { try await backend.create(Self.description(content, layout)) } == .tooLarge)
        #expect(throws: TransportError.self) {
            try PartLayout(objectSize: 2000, preferred: 500, capabilities: backend.capabilities)
        }
    }

    @Test func aPartAheadOfTheServersOffsetIsAConflictAndAnIncompleteUploadDoesNotComplete() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(
            creationURL: peer.tusURL("files"), client: client, options: TusBackendOptions(useConcatenation: false))
        let content = Self.bytes(100_000, seed: 20)
        let layout = try PartLayout(objectSize: 100_000, preferred: 32 << 10, capabilities: backend.capabilities)
        let upload = try await backend.create(Self.description(content, layout))
        #expect(await Self.code { try await backend.send(Self.part(1, content, layout), to: upload) } == .conflict)
        let first = try await backend.send(Self.part(0, content, layout), to: upload)
        #expect(
            await Self.code { try await backend.complete(upload, summary: Self.summary(content, [first])) } == .conflict
        )
        let mismatched = UploadPart(
            index: 0, offset: 0, body: .bytes([1, 2, 3]), length: 3, sha256: SHA256.hash([1, 2, 3]), crc32c: 0)
        #expect(await Self.code { try await backend.send(mismatched, to: upload) } == .invalidArgument)
    }

    // MARK: The checksum server

    @Test(arguments: [("sha1", TusChecksumAlgorithm.sha1), ("crc32", .crc32)])
    func everyPatchCarriesTheChecksumTheServerChecks(mode: String, algorithm: TusChecksumAlgorithm) async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(
            creationURL: peer.checksumURL(mode), client: client, options: TusBackendOptions(maximumPartSize: 64 << 10))
        #expect(backend.checksum == algorithm)
        #expect(backend.capabilities.checksums == [algorithm == .sha1 ? .sha1 : .crc32])
        let content = Self.bytes(150_000, seed: 21)
        let layout = try PartLayout(objectSize: 150_000, preferred: 64 << 10, capabilities: backend.capabilities)
        let upload = try await backend.create(Self.description(content, layout))
        var receipts: [PartReceipt] = []
        for index in 0..<layout.partCount {
            receipts.append(try await backend.send(Self.part(index, content, layout), to: upload))
        }
        _ = try await backend.complete(upload, summary: Self.summary(content, receipts))
        #expect(try peer.storedOnChecksumServer(upload.location) == content)

        let id = String(upload.location.split(separator: "/").last ?? "")
        let patches = try await Self.log(peer, client).filter { $0.method == "PATCH" && $0.path.hasSuffix(id) }
        #expect(patches.count == layout.partCount)
        for (index, patch) in patches.enumerated() {
            let bytes = Self.bytes(of: index, content, layout)
            let digest: [UInt8]
            switch algorithm {
            case .sha1: digest = SHA1.hash(bytes)
            case .crc32:
                let value = CRC32.checksum(bytes)
                digest = [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
            }
            #expect(patch.headers["Upload-Checksum"] == "\(mode) \(Data(digest).base64EncodedString())")
            #expect(patch.headers["Upload-Offset"] == "\(layout.range(ofPart: index).lowerBound)")
            #expect(patch.headers["Content-Type"] == "application/offset+octet-stream")
            #expect(patch.headers["Tus-Resumable"] == "1.0.0")
        }
    }

    @Test func bytesChangedOnTheWayAreAChecksumMismatchAndNotStored() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(creationURL: peer.checksumURL("corrupt"), client: client)
        let content = Self.bytes(10_000, seed: 22)
        let layout = try PartLayout(objectSize: 10_000, preferred: 10_000, capabilities: backend.capabilities)
        let upload = try await backend.create(Self.description(content, layout))
        #expect(
            await Self.code { try await backend.send(Self.part(0, content, layout), to: upload) } == .checksumMismatch)
        #expect(try await backend.progress(of: upload) == .offset(0, complete: false))
    }

    @Test func creationWithUploadSendsThePartInOnePostWithItsChecksum() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(
            creationURL: peer.checksumURL("withupload"), client: client,
            options: TusBackendOptions(maximumPartSize: 64 << 10))
        let content = Self.bytes(100_000, seed: 23)
        let layout = try PartLayout(objectSize: 100_000, preferred: 64 << 10, capabilities: backend.capabilities)
        let (upload, first) = try await backend.create(
            Self.description(content, layout), sending: Self.part(0, content, layout))
        let second = try await backend.send(Self.part(1, content, layout), to: upload)
        _ = try await backend.complete(upload, summary: Self.summary(content, [first, second]))
        #expect(try peer.storedOnChecksumServer(upload.location) == content)
        let id = String(upload.location.split(separator: "/").last ?? "")
        let requests = try await Self.log(peer, client).filter { $0.path.hasPrefix("/withupload/") }
        let post = try #require(requests.first { $0.method == "POST" })
        #expect(post.length == Int(layout.partSize))
        #expect(post.headers["Content-Type"] == "application/offset+octet-stream")
        #expect(post.headers["Upload-Length"] == "100000")
        #expect(
            post.headers["Upload-Checksum"]
                == "sha1 \(Data(SHA1.hash(Self.bytes(of: 0, content, layout))).base64EncodedString())")
        #expect(post.headers["Upload-Metadata"] == "filename c2Nhbi5iaW4=,filetype YXBwbGljYXRpb24vb2N0ZXQtc3RyZWFt")
        let patches = requests.filter { $0.method == "PATCH" && $0.path.hasSuffix(id) }
        #expect(patches.map { $0.headers["Upload-Offset"] } == ["\(layout.partSize)"])
    }

    @Test func aServerThatDoesNotSpeak1_0_0IsRefusedWithItsVersion() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        #expect(
            await Self.code { try await TusBackend.discover(creationURL: peer.checksumURL("v2"), client: client) }
                == .versionUnsupported)
        // A backend that believes in 1.0.0 meets the server's 412.
        let backend = try TusBackend(
            creationURL: peer.checksumURL("v2"), client: client,
            server: try TusServerInfo(headers: ["Tus-Version": "1.0.0", "Tus-Extension": "creation"]))
        let layout = try PartLayout(objectSize: 10, preferred: 10, capabilities: backend.capabilities)
        do {
            _ = try await backend.create(Self.description(Array(repeating: 0, count: 10), layout))
            Issue.record("a 412 was not refused")
        } catch {
            #expect(error.code == .versionUnsupported)
            #expect(error.message.contains("2.0.0"))
        }
    }

    @Test func a413IsTooLarge() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let backend = try await TusBackend.discover(creationURL: peer.checksumURL("limit"), client: client)
        let layout = try PartLayout(objectSize: 2000, preferred: 2000, capabilities: backend.capabilities)
        #expect(
            await Self.code { try await backend.create(Self.description(Self.bytes(2000, seed: 24), layout)) }
                == .tooLarge)
    }

    @Test func aLocationOnAnotherOriginIsRefusedAndARelativeOneIsResolved() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let content = Self.bytes(5000, seed: 25)
        let evil = try await TusBackend.discover(creationURL: peer.checksumURL("evil"), client: client)
        let layout = try PartLayout(objectSize: 5000, preferred: 5000, capabilities: evil.capabilities)
        #expect(await Self.code { try await evil.create(Self.description(content, layout)) } == .protocolViolation)

        let relative = try await TusBackend.discover(creationURL: peer.checksumURL("relative"), client: client)
        let upload = try await relative.create(Self.description(content, layout))
        #expect(upload.location.hasPrefix("http://127.0.0.1:\(peer.checksum)/relative/"))
        let receipt = try await relative.send(Self.part(0, content, layout), to: upload)
        _ = try await relative.complete(upload, summary: Self.summary(content, [receipt]))
        #expect(try peer.storedOnChecksumServer(upload.location) == content)
    }
}
