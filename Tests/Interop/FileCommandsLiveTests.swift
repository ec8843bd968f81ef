import AetherIO
import Foundation
import Testing

/// The file commands of the `aether` binary, run as a separate process the way an operator runs them.
@Suite struct FileCommandsLiveTests {
    private static func randomFile(_ path: String, size: Int) throws {
        var generator = SecureRandom()
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func digestWritesAManifestThatVerifyAcceptsAndThatCatchesTheFirstBadChunk() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/data.bin"
        let manifest = directory + "/data.manifest.json"
        try Self.randomFile(file, size: 5 * 65_536 + 17)
        let (status, output, _) = try SessionLive.runAether([
            "digest", file, "--chunk-size", "64K", "--manifest", manifest,
        ])
        #expect(status == 0)
        let expected = try SHA256.hash(Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(output.contains("sha256 \(expected.hex)"))
        #expect(output.contains("merkle_root ") && output.contains("chain_head ") && output.contains("cid bafkrei"))

        let intact = try SessionLive.runAether(["verify", file, manifest])
        #expect(intact.0 == 0 && intact.1.hasPrefix("intact: 6 chunks"))

        // One flipped byte in chunk 3 is named; the manifest is untouched.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: file))
        try handle.seek(toOffset: 3 * 65_536 + 100)
        let original = try #require(try handle.read(upToCount: 1))
        try handle.seek(toOffset: 3 * 65_536 + 100)
        try handle.write(contentsOf: Data([original[0] ^ 0x01]))
        try handle.close()
        let tampered = try SessionLive.runAether(["verify", file, manifest])
        #expect(tampered.0 == 1)
        #expect(tampered.1.contains("bad chunk 3 at offset 196608"))

        // A truncated file is named at the chunk where it ends.
        let truncating = try FileHandle(forUpdating: URL(fileURLWithPath: file))
        try truncating.truncate(atOffset: 65_536 + 5)
        try truncating.close()
        let short = try SessionLive.runAether(["verify", file, manifest])
        #expect(short.0 == 1 && short.1.contains("bad chunk 1"))
    }

    @Test func verifyRefusesAMalformedManifestWithATypedError() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/data.bin"
        try Self.randomFile(file, size: 1000)
        let manifest = directory + "/m.json"
        try Data("{\"formatVersion\": 1}".utf8).write(to: URL(fileURLWithPath: manifest))
        let (status, _, error) = try SessionLive.runAether(["verify", file, manifest])
        #expect(status == 1)
        #expect(error.contains("IntegrityError(malformedManifest)"))
    }

    @Test func erasureCodedFileIsRebuiltAfterLosingAsManyShardsAsItHasParity() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/data.bin"
        let shards = directory + "/shards"
        let rebuilt = directory + "/rebuilt.bin"
        try Self.randomFile(file, size: 300_001)
        let encoded = try SessionLive.runAether(["ec", "encode", "--data", "4", "--parity", "2", file, shards])
        #expect(encoded.0 == 0)
        // Lose one data shard outright and damage another: two erasures, the most RS(4,2) repairs.
        try FileManager.default.removeItem(atPath: shards + "/shard-00001.bin")
        let damaged = try FileHandle(forUpdating: URL(fileURLWithPath: shards + "/shard-00002.bin"))
        try damaged.write(contentsOf: Data([0xFF, 0x00, 0xFF]))
        try damaged.close()
        let decoded = try SessionLive.runAether(["ec", "decode", shards, rebuilt])
        #expect(decoded.0 == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: rebuilt)) == Data(contentsOf: URL(fileURLWithPath: file)))

        // A third loss is one too many: a typed error, and the earlier output stays as it was.
        try FileManager.default.removeItem(atPath: shards + "/shard-00000.bin")
        let before = try Data(contentsOf: URL(fileURLWithPath: rebuilt))
        let failed = try SessionLive.runAether(["ec", "decode", shards, rebuilt])
        #expect(failed.0 != 0)
        #expect(failed.2.contains("CodingError"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: rebuilt)) == before)
    }
}
