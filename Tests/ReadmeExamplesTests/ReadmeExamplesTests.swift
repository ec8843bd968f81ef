import AetherCoding
import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherScheduling
import AetherSecurity
import AetherTransport
import AetherUploader
import Foundation
import Testing

/// Runs every README example (`Examples.swift`) and checks its result against values computed here another way.
@Suite struct ReadmeExamplesTests {
    /// A temporary directory removed when the test ends.
    final class Scratch {
        let path: String

        init() throws {
            path =
                FileManager.default.temporaryDirectory.appendingPathComponent("aether-readme-\(UUID().uuidString)")
                .path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// Writes `bytes` to `name` in the directory and returns its path.
        func file(_ name: String, _ bytes: [UInt8]) throws -> String {
            let file = path + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            return file
        }
    }

    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    static func chunkHashes(_ content: [UInt8], chunkSize: Int) -> [Digest32] {
        stride(from: 0, to: content.count, by: chunkSize).map {
            SHA256.hash(content[$0..<min($0 + chunkSize, content.count)])
        }
    }

    @Test func theDigestExampleGivesTheFileAndChunkDigests() throws {
        let scratch = try Scratch()
        let content = Self.bytes(3 * (1 << 20) + 12_345, seed: 1)
        let (sha256, chunks) = try digestFile(at: try scratch.file("data.bin", content))
        #expect(sha256 == SHA256.hash(content))
        #expect(chunks.map(\.sha256) == Self.chunkHashes(content, chunkSize: 1 << 20))
        #expect(chunks.map(\.length) == [1 << 20, 1 << 20, 1 << 20, 12_345])
        #expect(chunks.last.map { $0.crc32c == CRC32C.checksum(content[(3 << 20)...]) } == true)
    }

    @Test func theMerkleExampleMatchesTheRootOfTheWholeListAndProvesEveryChunk() throws {
        let hashes = Self.chunkHashes(Self.bytes(7 * 1000 + 5, seed: 2), chunkSize: 1000)
        let expected = try MerkleProofBuilder(chunkHashes: hashes).root
        for index in hashes.indices {
            let (root, proven) = try merkleRoot(of: hashes, proving: index)
            #expect(root == expected)
            #expect(proven)
        }
        // The root depends on every leaf: one changed chunk digest changes it.
        var altered = hashes
        altered[3] = SHA256.hash([1, 2, 3])
        #expect(try merkleRoot(of: altered, proving: 0).root != expected)
    }

    @Test func theMerkleExampleChecksTheRootOfTheDigestExample() throws {
        let scratch = try Scratch()
        let content = Self.bytes(2 * (1 << 20) + 7, seed: 3)
        let (_, chunks) = try digestFile(at: try scratch.file("data.bin", content))
        let (root, proven) = try merkleRoot(of: chunks.map(\.sha256), proving: 2)
        #expect(proven)
        #expect(root == (try MerkleProofBuilder(chunkHashes: Self.chunkHashes(content, chunkSize: 1 << 20)).root))
    }

    @Test func theReedSolomonExampleRebuildsTheDataAfterTwoLosses() throws {
        let data = (0..<4).map { Self.bytes(1000, seed: UInt64(10 + $0)) }
        #expect(try rebuildAfterLosingTwoShards(data) == data)
        // A third loss is more than two parity shards can repair.
        let code = try ReedSolomonCode(dataShards: 4, parityShards: 2)
        var shards: [[UInt8]?] = data + (try code.encode(data))
        shards[0] = nil
        shards[1] = nil
        shards[5] = nil
        #expect(throws: CodingError.self) { try code.decode(shards) }
    }

    @Test func theSchedulingExamplePicksTheTierOfTheLinkAndLargerChunksForAFasterOne() {
        let slow = plan(forSteadyMegabitsPerSecond: 2)
        let fast = plan(forSteadyMegabitsPerSecond: 50)
        #expect(slow.strategy.tier == .slow)
        #expect(fast.strategy.tier == .fast)
        #expect(fast.chunkSizeBytes > slow.chunkSizeBytes)
        #expect(fast.parallelism >= slow.parallelism)
        for decision in [slow, fast] {
            #expect(SchedulingContext(roundTripTime: 0.04).chunkBounds.contains(decision.chunkSizeBytes))
        }
    }

    @Test func theSecurityExampleOpensWhatItSealedAndRefusesAChangedByte() throws {
        let message = Array("the scan of the north wall".utf8)
        let (opened, refused) = try sealOpenAndTamper(message)
        #expect(opened == message)
        #expect(refused)
    }

    @Test func theReceiverUploaderAndTransportExamplesUploadAFileEndToEnd() async throws {
        let scratch = try Scratch()
        let store = scratch.path + "/store"
        let content = Self.bytes(5 * (1 << 20) + 321, seed: 4)
        let file = try scratch.file("scan.bin", content)
        let server = try startReceiver(storingIn: store)
        defer { server.stop() }
        #expect(server.url.hasPrefix("http://127.0.0.1:"))
        let uploadsURL = server.url + "/uploads"

        let client = try HTTPClient()
        defer { client.shutDown() }
        let (mode, backend) = try await detectProtocol(at: uploadsURL, client: client)
        #expect(mode == .native)
        #expect(backend is NativeBackend)

        let outcome = try await upload(file: file, to: uploadsURL, stateDirectory: scratch.path + "/state")
        #expect(outcome.sha256 == SHA256.hash(content))
        #expect(outcome.receipt.size == Int64(content.count))
        #expect(outcome.receipt.serverSHA256 == SHA256.hash(content))
        #expect(outcome.receipt.serverMerkleRoot == outcome.merkleRoot)
        #expect(Set(outcome.serverVerified).isSuperset(of: ["sha256", "merkle-root", "chain-head"]))
        #expect(outcome.partsSent == outcome.partCount)

        let stored = try storedObject(at: outcome.receipt.location, storingIn: store)
        #expect(FileManager.default.contents(atPath: stored.description).map { Array($0) } == content)
    }

    @Test func theFolderExampleStoresEveryFileAndTheManifestAndASecondCallSendsNothing() async throws {
        let scratch = try Scratch()
        let store = scratch.path + "/store"
        var contents: [String: [UInt8]] = [:]
        for index in 0..<12 {
            let name = "frames/\(index % 3)/frame-\(index).bin"
            contents[name] = Self.bytes(1000 + index * 500, seed: UInt64(100 + index))
        }
        contents["mesh.ply"] = Self.bytes(2 << 20, seed: 5)
        for (name, bytes) in contents {
            let path = scratch.path + "/scan/" + name
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        }
        let server = try startReceiver(storingIn: store)
        defer { server.stop() }
        let outcome = try await uploadFolder(
            scratch.path + "/scan", to: server.url + "/uploads", stateDirectory: scratch.path + "/state")
        #expect(outcome.files.count == contents.count)
        for file in outcome.files {
            let stored = try storedObject(at: file.location, storingIn: store)
            #expect(FileManager.default.contents(atPath: stored.description).map { Array($0) } == contents[file.path])
        }
        let manifest = try storedObject(at: try #require(outcome.manifestLocation), storingIn: store)
        let document =
            try JSONSerialization.jsonObject(
                with: try #require(FileManager.default.contents(atPath: manifest.description))) as? [String: Any]
        #expect(document?["root"] as? String == outcome.root?.hex)
        let again = try await uploadFolder(
            scratch.path + "/scan", to: server.url + "/uploads", stateDirectory: scratch.path + "/state")
        #expect(again.files.allSatisfy { $0.alreadyUploaded })
        #expect(again.root == outcome.root)
    }

    @Test func theStoredObjectExampleRefusesALocationWithoutAnUploadID() throws {
        let scratch = try Scratch()
        #expect(throws: ReceiverError.self) { try storedObject(at: "/uploads/../x", storingIn: scratch.path) }
    }
}
