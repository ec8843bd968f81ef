import AetherIO
import Foundation
import Testing

@testable import AetherCoding

#if canImport(Glibc)
    import Glibc
#endif

/// The shard-file codec never destroys an input, never hangs on a FIFO, never mixes two shard sets and
/// never hands out a rebuilt file that is not the original.
@Suite struct ErasureCodedFileSafetyTests {
    typealias Scratch = ErasureCodedFileTests.Scratch

    static func code(of error: any Error) -> CodingError.Code? { (error as? CodingError)?.code }

    static func encoded(_ scratch: Scratch, size: Int = 10_000, seed: UInt64 = 1) throws -> (ShardIndex, [UInt8]) {
        let original = ErasureCodedFileTests.randomBytes(size, seed: seed)
        try scratch.write(original, to: scratch.input)
        return (
            try ErasureCodedFile.encode(file: scratch.input, dataShards: 4, parityShards: 2, into: scratch.shards),
            original
        )
    }

    static func snapshot(_ directory: String) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            files[name] = Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
        }
        return files
    }

    // MARK: an output is never an input

    @Test func decodingOverTheIndexAShardOrIntoTheShardDirectoryIsRefused() throws {
        let scratch = try Scratch()
        _ = try Self.encoded(scratch)
        let before = try Self.snapshot(scratch.shards)
        #expect(unsafe symlink(scratch.index, scratch.root + "/link-to-index") == 0)
        #expect(unsafe link(scratch.shard(3), scratch.root + "/hard-link-to-shard") == 0)
        let outputs = [
            scratch.index, scratch.shard(0), scratch.shard(5), scratch.shards + "/new.bin", scratch.shards,
            scratch.root + "/link-to-index", scratch.root + "/hard-link-to-shard",
        ]
        for output in outputs {
            #expect {
                try ErasureCodedFile.decode(directory: scratch.shards, to: output)
            } throws: { Self.code(of: $0) == .outputIsInput }
        }
        #expect(try Self.snapshot(scratch.shards) == before)
        #expect(scratch.leftovers.isEmpty)
    }

    @Test func encodingAShardOfASetIntoThatSetsDirectoryIsRefused() throws {
        let scratch = try Scratch()
        _ = try Self.encoded(scratch)
        let before = try Self.snapshot(scratch.shards)
        for input in [scratch.shard(0), scratch.index] {
            #expect {
                try ErasureCodedFile.encode(file: input, dataShards: 2, parityShards: 1, into: scratch.shards)
            } throws: { Self.code(of: $0) == .outputIsInput }
        }
        #expect(try Self.snapshot(scratch.shards) == before)
    }

    @Test func encodingIntoADirectoryThatHoldsOtherFilesIsRefused() throws {
        let scratch = try Scratch()
        try scratch.write([1, 2, 3], to: scratch.input)
        try FileManager.default.createDirectory(atPath: scratch.shards, withIntermediateDirectories: true)
        try scratch.write(Array("precious".utf8), to: scratch.shards + "/notes.txt")
        #expect {
            try ErasureCodedFile.encode(file: scratch.input, dataShards: 2, parityShards: 1, into: scratch.shards)
        } throws: { Self.code(of: $0) == .outputIsInput }
        #expect(try Self.snapshot(scratch.shards) == ["notes.txt": Array("precious".utf8)])
        // A file, not a directory, as OUTDIR: an error, and the file is kept.
        try scratch.write([9], to: scratch.root + "/plain")
        #expect {
            try ErasureCodedFile.encode(
                file: scratch.input, dataShards: 2, parityShards: 1, into: scratch.root + "/plain")
        } throws: { Self.code(of: $0) == .fileSystem }
        #expect(try scratch.read(scratch.root + "/plain") == [9])
    }

    // MARK: the switch to a new set

    @Test func aNewEncodingReplacesTheOldSetWholeLeavingNothingOfIt() throws {
        let scratch = try Scratch()
        _ = try Self.encoded(scratch, size: 10_000, seed: 2)
        let second = ErasureCodedFileTests.randomBytes(3000, seed: 3)
        try scratch.write(second, to: scratch.input)
        let index = try ErasureCodedFile.encode(
            file: scratch.input, dataShards: 2, parityShards: 1, into: scratch.shards)
        let names = try FileManager.default.contentsOfDirectory(atPath: scratch.shards).sorted()
        #expect(names == ["index.json", "shard-00000.bin", "shard-00001.bin", "shard-00002.bin"])
        #expect(try ErasureCodedFile.readIndex(directory: scratch.shards) == index)
        try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        #expect(try scratch.read(scratch.output) == second)
        #expect(scratch.leftovers.isEmpty)
    }

    @Test func aFailedEncodingLeavesTheEarlierSetWholeAndNoStagingBehind() throws {
        let scratch = try Scratch()
        let (_, original) = try Self.encoded(scratch, size: 20_000, seed: 4)
        let before = try Self.snapshot(scratch.shards)
        try scratch.write(ErasureCodedFileTests.randomBytes(20_000, seed: 5), to: scratch.input)
        #expect {
            try ErasureCodedFile.encode(
                file: FilePath(scratch.input), dataShards: 4, parityShards: 2, into: FilePath(scratch.shards),
                kernel: .automatic, maximumBlockSize: 256
            ) { offset throws(CodingError) in
                // Fails half way, after some shards of the new set were written.
                if offset >= 2048 { throw CodingError(.fileSystem, "simulated: no space left on device") }
            }
        } throws: { Self.code(of: $0) == .fileSystem }
        #expect(try Self.snapshot(scratch.shards) == before)
        #expect(scratch.leftovers.isEmpty)
        try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        #expect(try scratch.read(scratch.output) == original)
    }

    @Test func aFileThatChangesWhileItIsEncodedIsFileChangedAndNoSetReplacesTheOldOne() throws {
        let scratch = try Scratch()
        _ = try Self.encoded(scratch, size: 20_000, seed: 6)
        let before = try Self.snapshot(scratch.shards)
        try scratch.write(ErasureCodedFileTests.randomBytes(20_000, seed: 7), to: scratch.input)
        let input = scratch.input
        #expect {
            try ErasureCodedFile.encode(
                file: FilePath(input), dataShards: 4, parityShards: 2, into: FilePath(scratch.shards),
                kernel: .automatic, maximumBlockSize: 256
            ) { offset throws(CodingError) in
                guard offset == 256 else { return }
                // Another writer appends to the file between two stripes.
                guard let handle = FileHandle(forWritingAtPath: input) else { return }
                handle.seekToEndOfFile()
                handle.write(Data([1, 2, 3]))
                handle.closeFile()
            }
        } throws: { Self.code(of: $0) == .fileChanged }
        #expect(try Self.snapshot(scratch.shards) == before)
        #expect(scratch.leftovers.isEmpty)
    }

    // MARK: decode does not trust the index

    @Test func anEditedFileSizeThatKeepsTheShardSizeIsAnErrorNotAShortFile() throws {
        let scratch = try Scratch()
        let (index, _) = try Self.encoded(scratch, size: 10_000, seed: 8)
        #expect(index.shardSize == 2500)
        let text = String(decoding: try scratch.read(scratch.index), as: UTF8.self)
        // 9_997 bytes at k = 4 still gives 2500-byte shards: every shard digest still matches.
        let edited = text.replacingOccurrences(of: "\"fileSize\":10000", with: "\"fileSize\":9997")
        #expect(edited != text)
        try scratch.write(Array(edited.utf8), to: scratch.index)
        try scratch.write(Array("keep me".utf8), to: scratch.output)
        #expect {
            try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        } throws: { Self.code(of: $0) == .verificationFailed }
        #expect(try scratch.read(scratch.output) == Array("keep me".utf8))
        #expect(scratch.leftovers.isEmpty)
    }

    @Test func anIndexWithoutTheFileDigestNeedsTheExpectedDigestFromTheCaller() throws {
        let scratch = try Scratch()
        let (index, original) = try Self.encoded(scratch, size: 5000, seed: 9)
        let old = try ShardIndex(
            code: index.code, fileSize: index.fileSize, shardDigests: index.shardDigests, fileSHA256: nil)
        let oldJSON = String(decoding: try old.encoded(), as: UTF8.self)
            .replacingOccurrences(of: ShardIndex.format, with: ShardIndex.formatWithoutFileDigest)
        try scratch.write(Array(oldJSON.utf8), to: scratch.index)
        #expect {
            try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        } throws: { Self.code(of: $0) == .unverifiableIndex }
        #expect(!FileManager.default.fileExists(atPath: scratch.output))
        // The wrong expected digest is refused; the right one rebuilds.
        #expect {
            try ErasureCodedFile.decode(
                directory: scratch.shards, to: scratch.output, expectedSHA256: SHA256.hash([1]))
        } throws: { Self.code(of: $0) == .verificationFailed }
        try ErasureCodedFile.decode(
            directory: scratch.shards, to: scratch.output, expectedSHA256: SHA256.hash(original))
        #expect(try scratch.read(scratch.output) == original)
    }

    @Test func anExpectedDigestThatDisagreesWithTheIndexIsRefusedBeforeAnythingIsWritten() throws {
        let scratch = try Scratch()
        let (index, _) = try Self.encoded(scratch, size: 5000, seed: 10)
        #expect(index.fileSHA256 != nil)
        #expect {
            try ErasureCodedFile.decode(
                directory: scratch.shards, to: scratch.output, expectedSHA256: SHA256.hash([1]))
        } throws: { Self.code(of: $0) == .verificationFailed }
        #expect(!FileManager.default.fileExists(atPath: scratch.output))
    }

    // MARK: non-regular files

    @Test(.timeLimit(.minutes(1))) func aFIFOAsInputIndexOrShardIsATypedErrorNotAHang() throws {
        let scratch = try Scratch()
        _ = try Self.encoded(scratch)
        let fifo = scratch.root + "/fifo"
        #expect(unsafe mkfifo(fifo, 0o600) == 0)
        #expect {
            try ErasureCodedFile.encode(file: fifo, dataShards: 2, parityShards: 1, into: scratch.root + "/other")
        } throws: { Self.code(of: $0) == .notARegularFile }
        for victim in [scratch.shard(1), scratch.index] {
            let saved = try scratch.read(victim)
            try scratch.remove(victim)
            #expect(unsafe mkfifo(victim, 0o600) == 0)
            #expect {
                try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
            } throws: { Self.code(of: $0) == .notARegularFile }
            try scratch.remove(victim)
            try scratch.write(saved, to: victim)
        }
        // A directory in a shard's place is refused the same way.
        try scratch.remove(scratch.shard(2))
        try FileManager.default.createDirectory(atPath: scratch.shard(2), withIntermediateDirectories: false)
        #expect {
            try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        } throws: { Self.code(of: $0) == .notARegularFile }
    }

    // MARK: modes and names

    @Test func aNewOutputHonoursTheUmaskAndAnExistingOneKeepsItsMode() throws {
        let scratch = try Scratch()
        let (_, original) = try Self.encoded(scratch, size: 3000, seed: 11)
        let mask = Self.currentUmask()
        try ErasureCodedFile.decode(directory: scratch.shards, to: scratch.output)
        #expect(try Self.mode(scratch.output) == 0o666 & ~mask)
        #expect(try scratch.read(scratch.output) == original)

        let existing = scratch.root + "/existing.bin"
        try scratch.write([0], to: existing)
        #expect(unsafe chmod(existing, 0o640) == 0)
        try ErasureCodedFile.decode(directory: scratch.shards, to: existing)
        #expect(try Self.mode(existing) == 0o640)
        #expect(try scratch.read(existing) == original)
    }

    @Test func namesThatAreNotUTF8ReachTheFileSystemUnchanged() throws {
        let scratch = try Scratch()
        let original = ErasureCodedFileTests.randomBytes(7000, seed: 12)
        let input = try FilePath(bytes: Array((scratch.root + "/in-").utf8) + [0xFF, 0xFE])
        let other = try FilePath(bytes: Array((scratch.root + "/in-").utf8) + [0xFF, 0xFD])
        let shards = try FilePath(bytes: Array((scratch.root + "/shards-").utf8) + [0xE9])
        let output = try FilePath(bytes: Array((scratch.root + "/out-").utf8) + [0xFF])
        try AtomicFile.write(original, to: input)
        try AtomicFile.write([1, 2, 3], to: other)
        let index = try ErasureCodedFile.encode(file: input, dataShards: 3, parityShards: 1, into: shards)
        #expect(index.fileSHA256 == SHA256.hash(original))
        try ErasureCodedFile.decode(directory: shards, to: output)
        #expect(try GuardedFile(path: output).readAll(maximumBytes: 1 << 20) == original)
        #expect(try GuardedFile(path: other).readAll(maximumBytes: 10) == [1, 2, 3])
    }

    @Test(.timeLimit(.minutes(1))) func theFountainCodeFollowsTheSameRules() throws {
        let scratch = try Scratch()
        let (_, original) = try Self.encoded(scratch, size: 6000, seed: 13)
        // A fountain set replaces a Reed-Solomon set whole, and rebuilds.
        let index = try FountainCodedFile.encode(
            file: scratch.input, symbolSize: 64, repairSymbolsPerBlock: 4, into: scratch.shards)
        let names = try FileManager.default.contentsOfDirectory(atPath: scratch.shards)
        #expect(!names.contains { $0.hasPrefix("shard-") })
        #expect(names.count == index.packetDigests.count + 1)
        #expect(scratch.leftovers.isEmpty)
        // Its outputs are never its inputs.
        let packet = scratch.shards + "/" + FountainIndex.packetFileName(sourceBlockNumber: 0, encodingSymbolID: 0)
        for output in [scratch.index, packet, scratch.shards + "/new.bin"] {
            #expect {
                try FountainCodedFile.decode(directory: scratch.shards, to: output)
            } throws: { Self.code(of: $0) == .outputIsInput }
        }
        #expect {
            try FountainCodedFile.encode(file: packet, symbolSize: 64, repairSymbolsPerBlock: 1, into: scratch.shards)
        } throws: { Self.code(of: $0) == .outputIsInput }
        // A FIFO among the packets is an error, not a hang.
        try scratch.remove(packet)
        #expect(unsafe mkfifo(packet, 0o600) == 0)
        #expect {
            try FountainCodedFile.decode(directory: scratch.shards, to: scratch.output)
        } throws: { Self.code(of: $0) == .notARegularFile }
        try scratch.remove(packet)
        try FountainCodedFile.decode(directory: scratch.shards, to: scratch.output)
        #expect(try scratch.read(scratch.output) == original)
    }

    static func mode(_ path: String) throws -> UInt32 {
        var status = stat()
        guard unsafe stat(path, &status) == 0 else { throw CodingError(.fileSystem, "stat \(path)") }
        return UInt32(status.st_mode) & 0o7777
    }

    /// The process umask, read without changing it (Linux 4.7+ reports it in /proc/self/status).
    static func currentUmask() -> UInt32 {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("Umask:") {
            return UInt32(line.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) ?? 0o022
        }
        return 0o022
    }
}
