import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// Batches of whole small files (`docs/PROTOCOL.md` 3.10) against the receiver over HTTP: each file is stored as its
/// own object and acknowledged with its own receipt, a file with wrong bytes fails alone, a batch sent again stores
/// each file once, a damaged batch is refused before any file is stored, and a batch cut part way keeps the files
/// completed before the cut and nothing of the one under way.
@Suite struct ReceiverNativeBatchTests {
    static func files(_ sizes: [Int], seed: UInt64) -> [NativeBatchFile] {
        sizes.enumerated().map { index, size in
            NativeBatchFile(
                bytes: ReceiverFixture.bytes(size, seed: seed + UInt64(index)),
                metadata: ["filename": "frames/\(index).bin"])
        }
    }

    /// The regular files of the store outside the catalogue and its lock.
    static func storedFiles(_ fixture: ReceiverFixture) throws -> [String] {
        try fixture.storeSnapshot().filter { $0.value != "directory" && $0.key != "receiver.lock" }.keys.sorted()
    }

    static func raw(
        _ fixture: ReceiverFixture, field: String?, type: String, body: [UInt8], protocolVersion: String? = "1"
    ) async throws -> HTTPResponse {
        var headers = [("Content-Type", type)]
        if let protocolVersion { headers.append(("Aether-Protocol", protocolVersion)) }
        if let field { headers.append(("Aether-Batch", field)) }
        return try await fixture.send("POST", "/uploads/batch", headers: headers, body: body)
    }

    static func request(_ files: [NativeBatchFile], damage: (inout NativeBatchRequest.File) -> Void = { _ in })
        -> [UInt8]
    {
        NativeBatchRequest(
            files: files.map { file in
                var entry = NativeBatchRequest.File(
                    create: NativeCreateRequest(
                        size: file.size, chunkSize: 16 << 10, chunks: 1, chainSessionID: file.chainSessionID),
                    crc32c: file.crc32c, sha256: file.sha256, merkleRoot: file.merkleRoot, chainHead: file.chainHead)
                damage(&entry)
                return entry
            }
        ).jsonBytes
    }

    @Test func aBatchStoresEachFileAsItsOwnObjectWithItsOwnReceipt() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await NativeBackend.discover(creationURL: fixture.uploadsURL, client: fixture.client)
        #expect(backend.server.maximumBatch == 256)
        #expect(backend.server.maximumBatchBytes == 64 << 20)
        let files = Self.files([0, 1, 5000, 16 << 10, 40_000], seed: 10)
        let outcomes = try await backend.send(batch: files)
        #expect(outcomes.count == files.count)
        var ids: Set<String> = []
        for (file, outcome) in zip(files, outcomes) {
            guard case .stored(let upload, let receipt) = outcome else {
                Issue.record("a file was not stored: \(outcome)")
                continue
            }
            #expect(receipt.size == file.size)
            #expect(receipt.serverSHA256 == file.sha256)
            #expect(receipt.serverMerkleRoot == file.merkleRoot)
            #expect(receipt.serverChainHead == file.chainHead)
            #expect(try fixture.object(at: upload.location) == file.bytes)
            ids.insert(try #require(upload.uploadID))
            // Each is a complete native upload of its own, with its name kept.
            let status = try await fixture.send("GET", upload.location, headers: [("Aether-Protocol", "1")])
            #expect(try NativeStatusDocument(json: status.body).state == .complete)
        }
        #expect(ids.count == files.count)
        let metrics = String(decoding: try await fixture.send("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("aether_batches_total 1\n"))
        #expect(metrics.contains("aether_batched_files_total 5\n"))
        #expect(metrics.contains("aether_uploads_completed_total{protocol=\"native\"} 5\n"))
    }

    @Test func aFileWithOtherBytesThanItsDigestsFailsAloneAndTheOthersAreStored() async throws {
        let fixture = try ReceiverFixture()
        let files = Self.files([3000, 4000, 5000], seed: 20)
        var body = Self.request(files)
        let document = body.count
        for file in files { body += file.bytes }
        // The middle file's bytes damaged on the way: its SHA-256 and CRC32C no longer match.
        body[document + 3000 + 17] ^= 0x5A
        let response = try await Self.raw(
            fixture, field: AetherBatchHeader(files: 3, document: document).fieldValue,
            type: AetherWire.batchMediaType, body: body)
        #expect(response.status == 200)
        let answer = try NativeBatchAnswer(json: response.body)
        #expect(answer.files.count == 3)
        guard answer.files.count == 3, case .stored(let first, _) = answer.files[0],
            case .failed(let problem) = answer.files[1], case .stored(let third, _) = answer.files[2]
        else {
            Issue.record("unexpected answer \(answer)")
            return
        }
        #expect(problem.status == 422)
        #expect(problem.name == "digest-mismatch")
        #expect(try fixture.object(at: first) == files[0].bytes)
        #expect(try fixture.object(at: third) == files[2].bytes)
        // Nothing of the damaged file stays: two objects, no stream file of a cancelled upload.
        let stored = try Self.storedFiles(fixture)
        #expect(stored.count == 2, "\(stored)")
        #expect(stored.allSatisfy { $0.hasPrefix("objects/") }, "\(stored)")
    }

    @Test func aBatchSentAgainStoresEachFileOnce() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await NativeBackend.discover(creationURL: fixture.uploadsURL, client: fixture.client)
        let bytes = (0..<4).map { ReceiverFixture.bytes(20_000 + $0, seed: 30 + UInt64($0)) }
        var locations: [[String]] = []
        // The same bytes twice, as a client sends a batch again when the answer was lost (new chain sessions).
        for _ in 0..<2 {
            let outcomes = try await backend.send(batch: bytes.map { NativeBatchFile(bytes: $0) })
            locations.append(
                outcomes.compactMap { outcome in
                    if case .stored(let upload, _) = outcome { return upload.location }
                    return nil
                })
        }
        #expect(locations[0].count == 4 && locations[1].count == 4)
        let store = try DirectoryBlobStore(root: fixture.directory)
        for (first, second) in zip(locations[0], locations[1]) {
            #expect(first != second)
            let a = store.path(of: .object(try UploadID(String(first.split(separator: "/").last ?? ""))))
            let b = store.path(of: .object(try UploadID(String(second.split(separator: "/").last ?? ""))))
            // One object under both uploads: the same inode.
            #expect(try Syscall.stat(a).inode == Syscall.stat(b).inode)
            #expect(try fixture.object(at: second) == fixture.object(at: first))
        }
        let inodes = try Self.storedFiles(fixture).map {
            try Syscall.stat(FilePath(fixture.directory.description + "/" + $0)).inode
        }
        #expect(inodes.count == 8 && Set(inodes).count == 4)
    }

    /// Found by a hostile pass: a batch sent again was linked to the object held, even when that object had been
    /// damaged at rest, so the new upload's receipt vouched for bad bytes. The held object is read back first; a
    /// damaged one is not linked to, and the new bytes are kept.
    @Test func aBatchSentAgainIsNotLinkedToAnObjectDamagedAtRest() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await NativeBackend.discover(creationURL: fixture.uploadsURL, client: fixture.client)
        let bytes = ReceiverFixture.bytes(30_000, seed: 60)
        guard case .stored(let first, _) = try await backend.send(batch: [NativeBatchFile(bytes: bytes)])[0] else {
            Issue.record("the first batch was not stored")
            return
        }
        let store = try DirectoryBlobStore(root: fixture.directory)
        let damaged = store.path(of: .object(try UploadID(try #require(first.uploadID)))).description
        var stored = Array(try #require(FileManager.default.contents(atPath: damaged)))
        stored[10] ^= 0xFF
        try Data(stored).write(to: URL(fileURLWithPath: damaged))
        guard case .stored(let second, _) = try await backend.send(batch: [NativeBatchFile(bytes: bytes)])[0] else {
            Issue.record("the second batch was not stored")
            return
        }
        let kept = store.path(of: .object(try UploadID(try #require(second.uploadID))))
        #expect(try Syscall.stat(kept).inode != Syscall.stat(FilePath(damaged)).inode)
        #expect(try fixture.object(at: second.location) == bytes)
    }

    @Test(arguments: [
        "no Aether-Batch", "another media type", "more files than advertised", "a count that is not the document's",
        "a Content-Length that is not the document and its files", "a file of two chunks",
        "a content id of other bytes",
        "a document that is not JSON", "no Aether-Protocol", "Aether-Protocol 2",
    ])
    func aDamagedBatchIsRefusedBeforeAnyFileIsStored(damage: String) async throws {
        var limits = ReceiverLimits(minimumChunkSize: 16 * 1024)
        limits.maximumBatchFiles = 3
        let fixture = try ReceiverFixture(limits: limits)
        let files = Self.files([3000, 4000], seed: 40)
        var document = Self.request(files)
        var count = files.count
        var type = AetherWire.batchMediaType
        var extra: [UInt8] = []
        var field: String?
        let status: Int
        switch damage {
        case "no Aether-Batch":
            status = 400
        case "another media type":
            type = "application/octet-stream"
            status = 415
        case "more files than advertised":
            count = 4
            status = 413
        case "a count that is not the document's":
            count = 1
            status = 400
        case "a Content-Length that is not the document and its files":
            extra = [0]
            status = 422
        case "a file of two chunks":
            document = Self.request(files) { $0.create.chunks = 2 }
            status = 400
        case "a content id of other bytes":
            document = Self.request(files) { $0.create.contentID = ACI(digest: SHA256.hash([1, 2, 3])).description }
            status = 400
        case "no Aether-Protocol", "Aether-Protocol 2":
            status = 400
        default:
            document = Array("{\"files\":[".utf8)
            status = 400
        }
        if damage != "no Aether-Batch" { field = AetherBatchHeader(files: count, document: document.count).fieldValue }
        let body = document + files.flatMap(\.bytes) + extra
        let version: String? = damage == "no Aether-Protocol" ? nil : damage == "Aether-Protocol 2" ? "2" : "1"
        let response = try await Self.raw(fixture, field: field, type: type, body: body, protocolVersion: version)
        #expect(response.status == status, "\(damage): \(String(decoding: response.body, as: UTF8.self))")
        _ = try ReceiverFixture.problem(response)
        #expect(try Self.storedFiles(fixture).isEmpty, "\(damage)")
    }

    @Test func aBatchCutPartWayKeepsTheFilesCompletedBeforeTheCutAndNothingOfTheNext() async throws {
        let fixture = try ReceiverFixture()
        let files = Self.files([10_000, 10_000, 10_000], seed: 50)
        let document = Self.request(files)
        let body = document + files.flatMap(\.bytes)
        let connection = try RawHTTPConnection(port: try #require(UInt16(fixture.url.split(separator: ":").last ?? "")))
        connection.send(
            "POST /uploads/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nAether-Protocol: 1\r\nContent-Type: "
                + "\(AetherWire.batchMediaType)\r\nAether-Batch: "
                + AetherBatchHeader(files: 3, document: document.count).fieldValue
                + "\r\nContent-Length: \(body.count)\r\n\r\n")
        // The first file and half of the second, then the connection is gone.
        connection.send(Array(body[0..<(document.count + 15_000)]))
        try await Task.sleep(for: .milliseconds(300))
        connection.close()
        var stored: [String] = []
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(100))
            stored = try Self.storedFiles(fixture)
            if stored.count == 1 { break }
        }
        #expect(stored.count == 1 && stored[0].hasPrefix("objects/"), "\(stored)")
        let object = try #require(stored.first)
        #expect(
            FileManager.default.contents(atPath: fixture.directory.description + "/" + object).map { Array($0) }
                == files[0].bytes)
        // The file under way was cancelled: the same batch again stores all three, the first found held.
        let backend = try await NativeBackend.discover(creationURL: fixture.uploadsURL, client: fixture.client)
        let again = try await backend.send(batch: files.map { NativeBatchFile(bytes: $0.bytes) })
        #expect(again.allSatisfy { if case .stored = $0 { true } else { false } })
        #expect(try Self.storedFiles(fixture).count == 4)
    }
}
