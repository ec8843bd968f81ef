import AetherIO
import AetherIntegrity
import Foundation
import Testing

@testable import AetherTransport

/// The batch's wire forms (`docs/PROTOCOL.md` 3.10): the document, `Aether-Batch`, the answer and the capability
/// round-trip, and each is parsed strictly.
@Suite struct NativeBatchWireTests {
    static let file = NativeBatchFile(bytes: Array("forty kibibytes, say".utf8), metadata: ["filename": "a/b.jpg"])

    static func entry(_ file: NativeBatchFile = file) -> NativeBatchRequest.File {
        var create = NativeCreateRequest(
            size: file.size, chunkSize: 16 << 10, chunks: 1, chainSessionID: file.chainSessionID,
            contentID: ACI(digest: file.sha256).description)
        create.metadata = file.metadata
        return NativeBatchRequest.File(
            create: create, crc32c: file.crc32c, sha256: file.sha256, merkleRoot: file.merkleRoot,
            chainHead: file.chainHead)
    }

    @Test func theDocumentRoundTripsAndItsFileDigestsAreTheBytes() throws {
        let request = NativeBatchRequest(files: [Self.entry(), Self.entry(NativeBatchFile(bytes: []))])
        let parsed = try NativeBatchRequest(json: request.jsonBytes)
        #expect(parsed == request)
        #expect(parsed.fileBytes == Self.file.size)
        #expect(Self.file.sha256 == SHA256.hash(Self.file.bytes))
        #expect(Self.file.crc32c == CRC32C.checksum(Self.file.bytes))
        // One chunk: the chain head is the one link, the root the tree over the one hash.
        #expect(
            Self.file.chainHead
                == ChunkCommitmentChain.link(
                    chunkHash: Self.file.sha256,
                    previous: ChunkCommitmentChain.genesis(sessionID: Self.file.chainSessionID)))
        #expect(try MerkleProofBuilder(chunkHashes: [Self.file.sha256]).root == Self.file.merkleRoot)
    }

    @Test(arguments: [
        "an unknown member", "no files", "two chunks", "parity", "a deferred size", "a CRC32C of 3 bytes",
        "a content id of other bytes",
    ])
    func aDamagedDocumentIsRefused(damage: String) throws {
        var entry = Self.entry()
        var text: String?
        switch damage {
        case "an unknown member":
            text = String(decoding: NativeBatchRequest(files: [entry]).jsonBytes, as: UTF8.self)
                .replacingOccurrences(of: "{\"chainHead\"", with: "{\"extra\":1,\"chainHead\"")
        case "no files": text = "{\"files\":[]}"
        case "two chunks":
            entry.create.chunkSize = 16 << 10
            entry.create.size = (16 << 10) + 1
            entry.create.chunks = 2
            entry.create.contentID = nil
        case "parity": entry.create.parity = ParityScheme(code: "rs8", data: 4, parity: 1)
        case "a deferred size": entry.create.sizeDeferred = true
        case "a CRC32C of 3 bytes":
            let sent = Data([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: entry.crc32c >> $0) }).base64EncodedString()
            text = String(decoding: NativeBatchRequest(files: [entry]).jsonBytes, as: UTF8.self)
                .replacingOccurrences(of: "\"crc32c\":\"" + sent, with: "\"crc32c\":\"AQEB")
            #expect(text?.contains("AQEB") == true)
        default: entry.create.contentID = ACI(digest: SHA256.hash([9])).description
        }
        let bytes = text.map { Array($0.utf8) } ?? NativeBatchRequest(files: [entry]).jsonBytes
        #expect(throws: AetherProtocolError.self, "\(damage)") { try NativeBatchRequest(json: bytes) }
    }

    /// The client's checks of an answer (`NativeBackend.send(batch:)`): a receipt of the file's own bytes under a
    /// location that names another upload (found by a hostile pass: the client recorded the other upload) is
    /// `.receiptMismatch`; a receipt naming other bytes is too; a problem is the file's refusal; the rest stand.
    @Test func anAnswerWhoseLocationOrReceiptIsNotTheFilesIsRefusedPerFile() async throws {
        let files = (0..<4).map { NativeBatchFile(bytes: Array(repeating: UInt8($0), count: 100 + $0)) }
        func receipt(_ file: NativeBatchFile, id: String) -> NativeReceipt {
            NativeReceipt(
                id: id, size: file.size, chunks: 1, fileSHA256: file.sha256, merkleRoot: file.merkleRoot,
                chainHead: file.chainHead, cid: CIDv1(digest: file.sha256).string, completedAt: 1_800_000_000)
        }
        let ids = ["aaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbb", "cccccccccccccccccccccccccc"]
        let answer = NativeBatchAnswer(files: [
            .stored(location: "/uploads/" + ids[0], receipt: receipt(files[0], id: ids[0])),
            .stored(location: "/uploads/" + ids[2], receipt: receipt(files[1], id: ids[1])),
            .stored(location: "/uploads/" + ids[2], receipt: receipt(files[3], id: ids[2])),
            .failed(ProblemDocument(name: "digest-mismatch", title: "x", status: 422, detail: "y")),
        ])
        let receiver = ScriptedNativeReceiver(answers: [
            .init(status: 200, headers: ["Content-Type": AetherWire.batchReceiptMediaType], body: answer.jsonBytes)
        ])
        let backend = try receiver.backend(
            server: AetherCapabilities(minimumChunkSize: 16 << 10, maximumBatch: 8, maximumBatchBytes: 1 << 20))
        let outcomes = try await backend.send(batch: files)
        guard outcomes.count == 4, case .stored(let upload, _) = outcomes[0], case .refused(let moved) = outcomes[1],
            case .refused(let other) = outcomes[2], case .refused(let problem) = outcomes[3]
        else {
            Issue.record("\(outcomes)")
            return
        }
        #expect(upload.location == "http://127.0.0.1:9/uploads/" + ids[0])
        #expect(moved.code == .receiptMismatch)
        #expect(other.code == .receiptMismatch)
        #expect(problem.code == .checksumMismatch)
        let request = try #require(receiver.requests.first)
        #expect(request.url == "http://127.0.0.1:9/uploads/batch")
        #expect(request.headers["Aether-Batch"]?.hasPrefix("files=4, document=") == true)
    }

    @Test func theHeaderTheAnswerAndTheCapabilityRoundTrip() throws {
        let header = AetherBatchHeader(files: 12, document: 4096)
        #expect(header.fieldValue == "files=12, document=4096")
        #expect(try AetherBatchHeader(parsing: header.fieldValue) == header)
        #expect(throws: AetherProtocolError.self) { try AetherBatchHeader(parsing: "files=12, document=4096, x=1") }
        #expect(throws: AetherProtocolError.self) { try AetherBatchHeader(parsing: "files=257, document=4096") }
        let receipt = NativeReceipt(
            id: "abcdefghijklmnopqrstuvwxyz", size: 20, chunks: 1, fileSHA256: Self.file.sha256,
            merkleRoot: Self.file.merkleRoot, chainHead: Self.file.chainHead,
            cid: CIDv1(digest: Self.file.sha256).string, completedAt: 1_800_000_000)
        let problem = ProblemDocument(name: "digest-mismatch", title: "Digest mismatch", status: 422, detail: "no")
        let answer = NativeBatchAnswer(files: [
            .stored(location: "/uploads/abcdefghijklmnopqrstuvwxyz", receipt: receipt), .failed(problem),
        ])
        #expect(try NativeBatchAnswer(json: answer.jsonBytes) == answer)
        let both = String(decoding: answer.jsonBytes, as: UTF8.self).replacingOccurrences(
            of: "{\"problem\"", with: "{\"location\":\"/x\",\"problem\"")
        #expect(throws: AetherProtocolError.self) { try NativeBatchAnswer(json: Array(both.utf8)) }
        var capabilities = AetherCapabilities(maximumBatch: 64, maximumBatchBytes: 1 << 20)
        #expect(capabilities.fieldValue.hasSuffix("max-batch=64, batch-bytes=1048576"))
        #expect(try AetherCapabilities(parsing: capabilities.fieldValue) == capabilities)
        capabilities = AetherCapabilities()
        #expect(try AetherCapabilities(parsing: capabilities.fieldValue).maximumBatch == 0)
        #expect(throws: AetherProtocolError.self) {
            try AetherCapabilities(parsing: AetherCapabilities().fieldValue + ", max-batch=4")
        }
    }
}
