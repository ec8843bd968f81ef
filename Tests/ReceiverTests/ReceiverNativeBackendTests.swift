import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// The Transport layer's `NativeBackend` (the aether/1 client) against the receiver in process.
@Suite struct ReceiverNativeBackendTests {
    static let chunkSize: Int64 = 16 * 1024

    struct Content {
        let bytes: [UInt8]
        let hashes: [Digest32]
        let links: [Digest32]
        let head: Digest32
        let root: Digest32

        init(size: Int, seed: UInt64, session: String) throws {
            bytes = ReceiverFixture.bytes(size, seed: seed)
            let content = bytes
            let ranges = stride(from: 0, to: size, by: Int(ReceiverNativeBackendTests.chunkSize)).map {
                $0..<min($0 + Int(ReceiverNativeBackendTests.chunkSize), size)
            }
            hashes = ranges.map { SHA256.hash(content[$0]) }
            var chain = try ChunkCommitmentChain(sessionID: session, plannedChunkCount: ranges.count)
            links = hashes.map { chain.append($0) }
            head = chain.head
            root = try MerkleProofBuilder(chunkHashes: hashes).root
        }

        func part(_ index: Int) -> UploadPart {
            let start = index * Int(ReceiverNativeBackendTests.chunkSize)
            let slice = Array(bytes[start..<min(start + Int(ReceiverNativeBackendTests.chunkSize), bytes.count)])
            return UploadPart(
                index: index, offset: Int64(start), body: .bytes(slice), length: Int64(slice.count),
                sha256: hashes[index], crc32c: CRC32C.checksum(slice), chainLink: links[index])
        }
    }

    @Test func theNativeBackendUploadsOutOfOrderPassesAChallengeAndCompletes() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await NativeBackend.discover(creationURL: fixture.uploadsURL, client: fixture.client)
        let content = try Content(size: 100_000, seed: 61, session: "native-e2e")
        let layout = try PartLayout(
            objectSize: 100_000, preferred: Self.chunkSize, capabilities: backend.capabilities,
            alignment: Self.chunkSize)
        #expect(layout.partCount == content.hashes.count)
        let upload = try await backend.create(
            UploadDescription(
                size: 100_000, layout: layout, contentType: nil, chainSessionID: "native-e2e",
                sha256: SHA256.hash(content.bytes)))
        var receipts: [PartReceipt] = []
        for index in (0..<layout.partCount).reversed() {
            receipts.append(try await backend.send(content.part(index), to: upload))
        }
        let head = try await fixture.send("HEAD", upload.location, headers: [("Aether-Protocol", "1")])
        #expect(head.headers["Aether-Received"] == "chunks=\(layout.partCount), prefix=\(layout.partCount)")
        #expect(
            try await ReceiverFixture.spotCheck(
                backend, upload, content: content.bytes, chunkSize: Self.chunkSize, hashes: content.hashes,
                indices: [0, layout.partCount - 1], requireProofs: true))
        let receipt = try await backend.complete(
            upload,
            summary: CompletionSummary(
                parts: receipts.sorted { $0.index < $1.index }, fileSHA256: SHA256.hash(content.bytes),
                merkleRoot: content.root, chainHead: content.head))
        #expect(receipt.serverMerkleRoot == content.root)
        #expect(receipt.serverChainHead == content.head)
        #expect(try fixture.object(at: upload.location) == content.bytes)
    }

    @Test func theDetectorPicksNativeAgainstTheReceiver() async throws {
        let fixture = try ReceiverFixture()
        let detected = try await BackendDetector(client: fixture.client).detect(fixture.uploadsURL)
        #expect(detected.mode == .native)
    }
}
