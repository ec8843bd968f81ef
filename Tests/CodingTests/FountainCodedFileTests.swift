import AetherIO
import Foundation
import Testing

@testable import AetherCoding

@Suite struct FountainCodedFileTests {
    typealias Scratch = ErasureCodedFileTests.Scratch

    func packetPath(_ scratch: Scratch, _ sbn: Int, _ esi: UInt32) -> String {
        scratch.shards + "/" + FountainIndex.packetFileName(sourceBlockNumber: sbn, encodingSymbolID: esi)
    }

    @Test func aFileComesBackFromWhateverIntactPacketsAreLeft() throws {
        let scratch = try Scratch()
        let original = ErasureCodedFileTests.randomBytes(50_001, seed: 1)
        try scratch.write(original, to: scratch.input)
        let index = try FountainCodedFile.encode(
            file: scratch.input, symbolSize: 512, repairSymbolsPerBlock: 12, into: scratch.shards)
        #expect(index.transmissionInformation.symbolSize == 512)
        #expect(index.packetDigests.count == 98 + 12)
        let json = try scratch.read(scratch.index)
        #expect(FountainIndex.isFountainIndex(json: json))
        #expect(try FountainIndex(json: json) == index)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains("\"oti\":\"" + Hex.encode(index.transmissionInformation.serialized) + "\""))
        // Each packet file is the payload ID then the symbol.
        let packet = try scratch.read(packetPath(scratch, 0, 5))
        #expect(packet.count == 4 + 512 && Array(packet[0..<4]) == [0, 0, 0, 5])
        #expect(Array(packet[4...]) == Array(original[5 * 512..<6 * 512]))

        for esi in [UInt32(0), 7, 50, 97, 100] { try scratch.remove(packetPath(scratch, 0, esi)) }
        var damaged = try scratch.read(packetPath(scratch, 0, 3))
        damaged[200] ^= 1
        try scratch.write(damaged, to: packetPath(scratch, 0, 3))
        try scratch.write(Array(damaged.prefix(100)), to: packetPath(scratch, 0, 4))
        let report = try FountainCodedFile.decode(directory: scratch.shards, to: scratch.output)
        #expect(report.missingPackets == 5 && report.damagedPackets == 2)
        #expect(try scratch.read(scratch.output) == original)
    }

    @Test func tooFewPacketsFailWithoutTouchingTheOutput() throws {
        let scratch = try Scratch()
        let original = ErasureCodedFileTests.randomBytes(10_000, seed: 2)
        try scratch.write(original, to: scratch.input)
        try FountainCodedFile.encode(
            file: scratch.input, symbolSize: 1024, repairSymbolsPerBlock: 2, into: scratch.shards)
        for esi in UInt32(0)..<3 { try scratch.remove(packetPath(scratch, 0, esi)) }
        try scratch.write([1, 2, 3], to: scratch.output)
        #expect {
            try FountainCodedFile.decode(directory: scratch.shards, to: scratch.output)
        } throws: { error in
            ErasureCodedFileTests.code(of: error) == .tooFewShards
        }
        #expect(try scratch.read(scratch.output) == [1, 2, 3])
    }

    /// A file of many small source blocks (WS = 16 KiB, N = 1) is coded and rebuilt one block at a time:
    /// no more than one block of file bytes is ever held, in either direction.
    @Test func manySourceBlocksAreCodedOneBlockAtATime() throws {
        let scratch = try Scratch()
        let original = ErasureCodedFileTests.randomBytes(200_003, seed: 4)
        try scratch.write(original, to: scratch.input)
        let encodeMemory = FountainCodedFile.MemoryProbe()
        let index = try FountainCodedFile.encode(
            file: FilePath(scratch.input), symbolSize: 512, repairSymbolsPerBlock: 3, into: FilePath(scratch.shards),
            maximumSubBlockSize: 16 * 1024, minimumSubSymbolSize: 64, memory: encodeMemory)
        let oti = index.transmissionInformation
        let blockBytes = oti.sourceSymbols(inBlock: 0) * oti.symbolSize
        #expect(oti.sourceBlocks >= 10 && oti.subBlocks == 1)
        #expect(blockBytes <= 16 * 1024)
        #expect(encodeMemory.buffers == oti.sourceBlocks)
        #expect(encodeMemory.peak <= blockBytes && encodeMemory.peak * 10 < original.count)
        #expect(try FountainIndex(json: scratch.read(scratch.index)) == index)

        // Two source packets lost in every block: each block needs its repair packets.
        for sbn in 0..<oti.sourceBlocks {
            for esi in [UInt32(0), 2] { try scratch.remove(packetPath(scratch, sbn, esi)) }
        }
        let decodeMemory = FountainCodedFile.MemoryProbe()
        let report = try FountainCodedFile.decode(
            directory: FilePath(scratch.shards), to: FilePath(scratch.output), memory: decodeMemory)
        #expect(try scratch.read(scratch.output) == original)
        #expect(report.missingPackets == 2 * oti.sourceBlocks && report.damagedPackets == 0)
        #expect(decodeMemory.buffers == oti.sourceBlocks)
        #expect(decodeMemory.peak <= blockBytes && decodeMemory.peak * 10 < original.count)
    }

    /// One unrecoverable block in the middle fails the decode with a typed error; the blocks already
    /// written before it never reach the output.
    @Test func anUnrecoverableMiddleBlockLeavesTheOutputUntouched() throws {
        let scratch = try Scratch()
        try scratch.write(ErasureCodedFileTests.randomBytes(100_000, seed: 5), to: scratch.input)
        let index = try FountainCodedFile.encode(
            file: FilePath(scratch.input), symbolSize: 512, repairSymbolsPerBlock: 1, into: FilePath(scratch.shards),
            maximumSubBlockSize: 16 * 1024, minimumSubSymbolSize: 64)
        let middle = index.transmissionInformation.sourceBlocks / 2
        #expect(middle >= 1)
        for esi in UInt32(0)..<2 { try scratch.remove(packetPath(scratch, middle, esi)) }
        try scratch.write([9, 9], to: scratch.output)
        #expect {
            try FountainCodedFile.decode(directory: scratch.shards, to: scratch.output)
        } throws: { error in
            ErasureCodedFileTests.code(of: error) == .tooFewShards
                && "\(error)".contains("source block \(middle)")
        }
        #expect(try scratch.read(scratch.output) == [9, 9])
        #expect(scratch.leftovers.isEmpty)
    }

    /// Where RFC 6330's WS = 10 MiB derivation would make a block larger than the bound (here 64 KiB in
    /// place of 128 MiB: one 200,000-byte block of 196 symbols), encode takes the bound's N = 1 derivation
    /// instead, so every block fits; the file still round-trips.
    @Test func theDefaultDerivationNeverMakesABlockLargerThanTheBound() throws {
        let scratch = try Scratch()
        let original = ErasureCodedFileTests.randomBytes(200_000, seed: 21)
        try scratch.write(original, to: scratch.input)
        let bound = 64 * 1024
        let unbounded = try RaptorQTransmissionInformation.derived(transferLength: 200_000, symbolSize: 1024)
        #expect(FountainCodedFile.largestBlockBytes(unbounded) > bound)
        let index = try FountainCodedFile.encode(
            file: FilePath(scratch.input), symbolSize: 1024, repairSymbolsPerBlock: 3, into: FilePath(scratch.shards),
            maximumSubBlockSize: FountainCodedFile.defaultMaximumSubBlockSize, minimumSubSymbolSize: nil,
            blockBound: bound)
        let oti = index.transmissionInformation
        #expect(oti.sourceBlocks > 1)
        for sbn in 0..<oti.sourceBlocks { #expect(oti.sourceSymbols(inBlock: sbn) * oti.symbolSize <= bound) }
        #expect(FountainCodedFile.largestBlockBytes(oti) <= bound)
        _ = try FountainCodedFile.decode(directory: FilePath(scratch.shards), to: FilePath(scratch.output), memory: nil)
        #expect(try scratch.read(scratch.output) == original)
    }

    /// An index whose blocks exceed the bound is refused before anything is allocated for them; the
    /// output stays as it was. The real bound caps `--block-size` too.
    @Test func decodeRefusesBlocksLargerThanTheBound() throws {
        let scratch = try Scratch()
        try scratch.write(ErasureCodedFileTests.randomBytes(100_000, seed: 22), to: scratch.input)
        try FountainCodedFile.encode(
            file: scratch.input, symbolSize: 1024, repairSymbolsPerBlock: 1, into: scratch.shards)
        try scratch.write([7], to: scratch.output)
        #expect {
            try FountainCodedFile.decode(
                directory: FilePath(scratch.shards), to: FilePath(scratch.output), memory: nil, blockBound: 64 * 1024)
        } throws: { error in
            ErasureCodedFileTests.code(of: error) == .invalidTransmissionInformation
        }
        #expect(try scratch.read(scratch.output) == [7])
        #expect {
            try FountainCodedFile.encode(
                file: FilePath(scratch.input), symbolSize: 1024, repairSymbolsPerBlock: 1,
                maximumBlockSize: FountainCodedFile.maximumBlockSize + 1, into: FilePath(scratch.shards))
        } throws: { error in
            ErasureCodedFileTests.code(of: error) == .invalidParameters
        }
        #expect(FountainCodedFile.maximumBlockSize == 128 << 20)
    }

    @Test func aDamagedIndexIsATypedError() throws {
        let scratch = try Scratch()
        try scratch.write(ErasureCodedFileTests.randomBytes(3000, seed: 3), to: scratch.input)
        try FountainCodedFile.encode(
            file: scratch.input, symbolSize: 256, repairSymbolsPerBlock: 1, into: scratch.shards)
        let json = String(decoding: try scratch.read(scratch.index), as: UTF8.self)
        let otiHex = Hex.encode(
            try FountainIndex(json: Array(json.utf8)).transmissionInformation.serialized)
        for bad in [
            json.replacingOccurrences(of: otiHex, with: String(otiHex.dropLast(2))),
            json.replacingOccurrences(of: otiHex, with: otiHex.uppercased()),
            json.replacingOccurrences(of: "\"repairSymbolsPerBlock\":1", with: "\"repairSymbolsPerBlock\":2"),
            json.replacingOccurrences(of: "raptorq", with: "lt"),
        ] {
            #expect(bad != json)
            #expect {
                try FountainIndex(json: Array(bad.utf8))
            } throws: { error in
                ErasureCodedFileTests.code(of: error) == .malformedIndex
            }
        }
    }
}
