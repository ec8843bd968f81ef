import AetherIO
import Foundation
import Testing

@testable import AetherCoding

@Suite struct ErasureCodedFileTests {
    /// A fresh directory under the system temporary directory, removed by `cleanup`.
    final class Scratch {
        let root: String
        init() throws {
            root = NSTemporaryDirectory() + "aether-ec-test-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: root) }
        var shards: String { root + "/shards" }
        var input: String { root + "/input.bin" }
        var output: String { root + "/output.bin" }
        func shard(_ index: Int) -> String { shards + "/" + ShardIndex.shardFileName(index) }
        var index: String { shards + "/" + ShardIndex.fileName }
        func write(_ bytes: [UInt8], to path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
        func read(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
        func remove(_ path: String) throws { try FileManager.default.removeItem(atPath: path) }
        var leftovers: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter {
                // Staged sets and backups (`DirectorySwap`), staged files (`AtomicFile`: `.NAME.HEX.tmp`).
                $0.contains(".aether-new-") || $0.contains(".aether-old-")
                    || ($0.hasPrefix(".") && $0.hasSuffix(".tmp"))
            }
        }
    }

    static func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func code(of error: any Error) -> CodingError.Code? { (error as? CodingError)?.code }

    @Test(arguments: [(10, 4, 100_003), (4, 2, 5000), (3, 0, 777), (1, 1, 64), (5, 3, 0)])
    func aFileSurvivesLosingAnyMOfItsShardsAcrossManyStripes(k: Int, m: Int, size: Int) throws {
        let scratch = try Scratch()
        let original = Self.randomBytes(size, seed: UInt64(size))
        try scratch.write(original, to: scratch.input)
        let index = try ErasureCodedFile.encode(
            file: FilePath(scratch.input), dataShards: k, parityShards: m, into: FilePath(scratch.shards),
            kernel: .automatic, maximumBlockSize: 256)
        #expect(index.fileSize == size)
        #expect(index.shardSize == (size + k - 1) / k)
        #expect(try ErasureCodedFile.readIndex(directory: scratch.shards) == index)
        for shard in 0..<(k + m) {
            let bytes = try scratch.read(scratch.shard(shard))
            #expect(bytes.count == index.shardSize)
            #expect(SHA256.hash(bytes) == index.shardDigests[shard])
        }
        // Lose the first m shards (all data shards when m >= k): the worst case for rebuilding.
        for shard in 0..<m { try scratch.remove(scratch.shard(shard)) }
        let report = try ErasureCodedFile.decode(
            directory: FilePath(scratch.shards), to: FilePath(scratch.output), expectedSHA256: nil, kernel: .automatic,
            maximumBlockSize: 256)
        #expect(try scratch.read(scratch.output) == original)
        #expect(report.missingShards == Array(0..<m))
        #expect(report.rebuiltDataShards == Array(0..<min(m, k)))
        #expect(scratch.leftovers.isEmpty)
    }

    @Test func theDefaultStripeSizeRoundTripsAndPortableKernelsAgree() throws {
        let scratch = try Scratch()
        let original = Self.randomBytes(300_001, seed: 5)
        try scratch.write(original, to: scratch.input)
        try ErasureCodedFile.encode(file: scratch.input, dataShards: 6, parityShards: 3, into: scratch.shards)
        let fastParity = try scratch.read(scratch.shard(7))
        try ErasureCodedFile.encode(
            file: scratch.input, dataShards: 6, parityShards: 3, into: scratch.shards, kernel: .portable)
        #expect(try scratch.read(scratch.shard(7)) == fastParity)
        try scratch.remove(scratch.shard(2))
        try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output, kernel: .portable)
        #expect(try scratch.read(scratch.output) == original)
    }

    @Test func aGF65536CodeWithMoreThan256ShardsRoundTrips() throws {
        let scratch = try Scratch()
        let original = Self.randomBytes(25_001, seed: 6)
        try scratch.write(original, to: scratch.input)
        let index = try ErasureCodedFile.encode(
            file: scratch.input, dataShards: 250, parityShards: 10, into: scratch.shards)
        #expect(index.code.field == .gf65536)
        #expect(index.shardSize % 2 == 0)
        for shard in [0, 17, 100, 101, 249, 250, 251, 3, 4, 5] { try scratch.remove(scratch.shard(shard)) }
        try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        #expect(try scratch.read(scratch.output) == original)
    }

    @Test func aDamagedShardIsTreatedAsErasedAndReported() throws {
        let scratch = try Scratch()
        let original = Self.randomBytes(40_000, seed: 7)
        try scratch.write(original, to: scratch.input)
        try ErasureCodedFile.encode(file: scratch.input, dataShards: 4, parityShards: 2, into: scratch.shards)
        var damaged = try scratch.read(scratch.shard(1))
        damaged[1234] ^= 0x01
        try scratch.write(damaged, to: scratch.shard(1))
        try scratch.remove(scratch.shard(3))
        let report = try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        #expect(try scratch.read(scratch.output) == original)
        #expect(report.corruptShards == [1])
        #expect(report.missingShards == [3])
        #expect(report.rebuiltDataShards == [1, 3])
        #expect(report.inputShards == [0, 2, 4, 5])
    }

    @Test func tooFewShardsIsATypedErrorAndTheOutputIsUntouched() throws {
        let scratch = try Scratch()
        try scratch.write(Self.randomBytes(10_000, seed: 8), to: scratch.input)
        try ErasureCodedFile.encode(file: scratch.input, dataShards: 4, parityShards: 2, into: scratch.shards)
        try scratch.write(Array("keep me".utf8), to: scratch.output)
        for shard in [0, 2, 5] { try scratch.remove(scratch.shard(shard)) }
        #expect {
            try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        } throws: { Self.code(of: $0) == .tooFewShards }
        #expect(try scratch.read(scratch.output) == Array("keep me".utf8))
        #expect(scratch.leftovers.isEmpty)
    }

    @Test func wrongSizeShardsAreErasedAndATypedErrorWhenTheyLeaveTooFew() throws {
        let scratch = try Scratch()
        let original = Self.randomBytes(10_000, seed: 9)
        try scratch.write(original, to: scratch.input)
        try ErasureCodedFile.encode(file: scratch.input, dataShards: 4, parityShards: 2, into: scratch.shards)
        try scratch.write(Array(try scratch.read(scratch.shard(0)).dropLast()), to: scratch.shard(0))
        let report = try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        #expect(report.wrongSizeShards == [0])
        #expect(try scratch.read(scratch.output) == original)

        try scratch.write(Array("keep me".utf8), to: scratch.output)
        try scratch.write(try scratch.read(scratch.shard(1)) + [0], to: scratch.shard(1))
        try scratch.write([], to: scratch.shard(4))
        #expect {
            try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        } throws: { Self.code(of: $0) == .shardSizeMismatch }
        #expect(try scratch.read(scratch.output) == Array("keep me".utf8))
    }

    @Test func aMissingOrMalformedIndexIsATypedError() throws {
        let scratch = try Scratch()
        try scratch.write(Self.randomBytes(1000, seed: 10), to: scratch.input)
        try ErasureCodedFile.encode(file: scratch.input, dataShards: 4, parityShards: 2, into: scratch.shards)
        let good = String(decoding: try scratch.read(scratch.index), as: UTF8.self)
        try scratch.write(Array("keep me".utf8), to: scratch.output)
        let variants = [
            "not json",
            good.replacingOccurrences(of: "aether-ec/2", with: "aether-ec/9"),
            good.replacingOccurrences(of: "\"shardSize\":250", with: "\"shardSize\":251"),
            good.replacingOccurrences(of: "\"parityShards\":2", with: "\"parityShards\":253"),
            good.replacingOccurrences(of: "\"gf256\"", with: "\"gf7\""),
            good.replacingOccurrences(of: "\"shardSHA256\":[\"", with: "\"shardSHA256\":[\"zz"),
        ]
        for variant in variants {
            #expect(variant != good || variant == "not json")
            try scratch.write(Array(variant.utf8), to: scratch.index)
            #expect {
                try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
            } throws: { Self.code(of: $0) == .malformedIndex }
        }
        try scratch.remove(scratch.index)
        #expect {
            try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        } throws: { Self.code(of: $0) == .malformedIndex }
        #expect(try scratch.read(scratch.output) == Array("keep me".utf8))
        #expect(scratch.leftovers.isEmpty)
    }

    @Test func aRebuildThatDoesNotMatchTheIndexIsRejected() throws {
        let scratch = try Scratch()
        try scratch.write(Self.randomBytes(4000, seed: 11), to: scratch.input)
        let index = try ErasureCodedFile.encode(
            file: scratch.input, dataShards: 4, parityShards: 2, into: scratch.shards)
        // Claim a different digest for data shard 2, then make it be rebuilt.
        var digests = index.shardDigests
        digests[2] = SHA256.hash(Array("something else".utf8))
        let forged = try ShardIndex(
            code: index.code, fileSize: index.fileSize, shardDigests: digests, fileSHA256: index.fileSHA256)
        try scratch.write(try forged.encoded(), to: scratch.index)
        try scratch.remove(scratch.shard(2))
        try scratch.write(Array("keep me".utf8), to: scratch.output)
        #expect {
            try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        } throws: { Self.code(of: $0) == .verificationFailed }
        #expect(try scratch.read(scratch.output) == Array("keep me".utf8))
    }

    @Test func encodingAMissingFileOrBadParametersIsATypedError() throws {
        let scratch = try Scratch()
        #expect {
            try ErasureCodedFile.encode(file: scratch.input, dataShards: 4, parityShards: 2, into: scratch.shards)
        } throws: { Self.code(of: $0) == .fileSystem }
        try scratch.write([1, 2, 3], to: scratch.input)
        #expect {
            try ErasureCodedFile.encode(file: scratch.input, dataShards: 0, parityShards: 2, into: scratch.shards)
        } throws: { Self.code(of: $0) == .invalidParameters }
    }
}
