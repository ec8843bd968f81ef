import AetherIO
import Testing

@testable import AetherCoding

@Suite struct RaptorQTests {
    static func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    @Test func systematicIndexTableHoldsEveryRowOfRFC6330Table2() throws {
        let table = RaptorQTables.systematicIndices
        #expect(table.count == 477 * 5)
        #expect(Array(table[0..<5]) == [10, 254, 7, 10, 17])
        #expect(Array(table[(476 * 5)...]) == [56403, 471, 907, 16, 56951])
        for row in 1..<477 { #expect(table[row * 5] > table[(row - 1) * 5], "K' must increase at row \(row)") }
        for q in [RaptorQTables.v0, RaptorQTables.v1, RaptorQTables.v2, RaptorQTables.v3] { #expect(q.count == 256) }
        #expect(RaptorQTables.v0[0] == 251_291_136 && RaptorQTables.v3[255] == 3_432_275_192)
    }

    @Test(arguments: [(1, 10), (10, 10), (11, 12), (820, 821), (56403, 56403)])
    func blockParametersPickTheSmallestTableEntryHoldingK(k: Int, kPrime: Int) throws {
        let parameters = try RaptorQBlockParameters(sourceSymbols: k)
        #expect(parameters.extendedSourceSymbols == kPrime)
        #expect(parameters.intermediateSymbols == kPrime + parameters.ldpcSymbols + parameters.hdpcSymbols)
        #expect(parameters.permanentlyInactivePrime >= parameters.permanentlyInactive)
    }

    @Test func blockParametersRejectKOutsideTheTable() {
        for k in [0, 56404] {
            #expect(throws: CodingError.self) { try RaptorQBlockParameters(sourceSymbols: k) }
        }
    }

    @Test func transmissionInformationRoundTripsThroughItsTwelveBytes() throws {
        let oti = try RaptorQTransmissionInformation(
            transferLength: 0x01_0203_0405, symbolSize: 1280, sourceBlocks: 77, subBlocks: 3, alignment: 8)
        #expect(oti.serialized == [0x01, 0x02, 0x03, 0x04, 0x05, 0, 0x05, 0x00, 77, 0, 3, 8])
        #expect(try RaptorQTransmissionInformation(serialized: oti.serialized) == oti)
    }

    @Test func malformedTransmissionInformationIsATypedError() throws {
        let good = try RaptorQTransmissionInformation(
            transferLength: 100_000, symbolSize: 1280, sourceBlocks: 1, subBlocks: 1, alignment: 8
        ).serialized
        var bad: [[UInt8]] = [Array(good.prefix(11)), good + [0]]
        var reserved = good
        reserved[5] = 1
        bad.append(reserved)
        var zeroBlocks = good
        zeroBlocks[8] = 0
        bad.append(zeroBlocks)
        var misaligned = good
        misaligned[7] = 0x01  // T = 1281, not a multiple of 8
        bad.append(misaligned)
        var zeroLength = good
        for i in 0..<5 { zeroLength[i] = 0 }
        bad.append(zeroLength)
        for bytes in bad {
            #expect {
                try RaptorQTransmissionInformation(serialized: bytes)
            } throws: { error in
                (error as? CodingError)?.code == .invalidTransmissionInformation
            }
        }
    }

    @Test func derivedParametersFollowRFC6330Section4Point3() throws {
        // One block while Kt fits KL(N_max) = 56403; several beyond.
        let small = try RaptorQTransmissionInformation.derived(transferLength: 1 << 20, symbolSize: 1280)
        #expect(small.sourceBlocks == 1 && small.subBlocks == 1 && small.alignment == 8)
        let large = try RaptorQTransmissionInformation.derived(transferLength: 600_000, symbolSize: 8)
        #expect(large.sourceBlocks == 2 && large.alignment == 1)
        #expect(large.sourceSymbols(inBlock: 0) + large.sourceSymbols(inBlock: 1) == 75000)
    }

    @Test(arguments: [(1, 16), (10, 64), (97, 48), (300, 1280)])
    func sourceSymbolsAreTheDataAndRepairSymbolsRebuildLostOnes(k: Int, t: Int) throws {
        let data = Self.randomBytes(k * t - t / 2, seed: UInt64(k * 31 + t))
        let oti = try RaptorQTransmissionInformation.derived(transferLength: UInt64(data.count), symbolSize: t)
        let encoder = try RaptorQEncoder(data: data, transmissionInformation: oti)
        let block = try #require(encoder.blocks.first)
        #expect(block.sourceSymbols == k)
        var padded = data
        padded.append(contentsOf: [UInt8](repeating: 0, count: k * t - data.count))
        for esi in 0..<k { #expect(try block.symbol(esi: UInt32(esi)) == Array(padded[esi * t..<(esi + 1) * t])) }
        // Lose every source symbol but the first: K - 1 repair symbols make up the difference.
        var decoder = try RaptorQDecoder(transmissionInformation: oti)
        try decoder.add(block.packet(esi: 0))
        var esi = UInt32(k)
        while decoder.progress != .decoded {
            try decoder.add(block.packet(esi: esi))
            esi += 1
            #expect(esi < UInt32(3 * k + 10), "decoding needs far too many repair symbols")
            if esi >= UInt32(3 * k + 10) { break }
        }
        #expect(decoder.decodedObject == data)
    }

    /// The decoder with the source symbols of ESIs `lost` missing (repair symbols from ESI K on until it
    /// decodes), computing the missing ones `evaluation`'s way.
    static func decode(
        _ data: [UInt8], symbolSize t: Int, lost: Set<Int>, evaluation: RaptorQSolver.Evaluation
    ) throws -> RaptorQBlockDecoder {
        let encoder = try RaptorQEncoder(data: data, symbolSize: t)
        let block = encoder.blocks[0]
        let k = block.sourceSymbols
        var decoder = try RaptorQBlockDecoder(
            transmissionInformation: encoder.transmissionInformation, sourceBlockNumber: 0)
        decoder.evaluation = evaluation
        for esi in 0..<k where !lost.contains(esi) {
            try decoder.add(esi: UInt32(esi), symbol: block.symbol(esi: UInt32(esi)))
        }
        var esi = UInt32(k)
        while decoder.progress != .decoded && esi < UInt32(3 * k) {
            try decoder.add(esi: esi, symbol: block.symbol(esi: esi))
            esi += 1
        }
        return decoder
    }

    @Test(arguments: [RaptorQSolver.Evaluation.affineForms, .backSubstitution, .cheaper], [0.02, 0.3, 1.0])
    func everyWayOfComputingTheMissingSourceSymbolsRebuildsTheBlock(
        evaluation: RaptorQSolver.Evaluation, sourceLoss: Double
    ) throws {
        let k = 500
        let t = 40
        let data = Self.randomBytes(k * t, seed: 14)
        var generator = SplitMix64(seed: UInt64(sourceLoss * 100))
        let lost = Set((0..<k).shuffled(using: &generator).prefix(Int(Double(k) * sourceLoss)))
        let decoder = try Self.decode(data, symbolSize: t, lost: lost, evaluation: evaluation)
        #expect(decoder.progress == .decoded)
        #expect(decoder.decodedBlock == data)
        if evaluation != .cheaper { #expect(decoder.evaluationTaken == evaluation) }
    }

    @Test func fewMissingSymbolsAreReadOffTheAffineFormsAndManyComeFromBackSubstitution() throws {
        let k = 1000
        let t = 16
        let data = Self.randomBytes(k * t, seed: 15)
        let few = try Self.decode(data, symbolSize: t, lost: Set(stride(from: 0, to: k, by: 100)), evaluation: .cheaper)
        #expect(few.decodedBlock == data)
        #expect(few.evaluationTaken == .affineForms)
        let all = try Self.decode(data, symbolSize: t, lost: Set(0..<k), evaluation: .cheaper)
        #expect(all.decodedBlock == data)
        #expect(all.evaluationTaken == .backSubstitution)
    }

    @Test func aRepeatedSourceSymbolCountsOnceAndTheFirstCopyStays() throws {
        let data = Self.randomBytes(20 * 16, seed: 16)
        let encoder = try RaptorQEncoder(data: data, symbolSize: 16)
        let block = encoder.blocks[0]
        var decoder = try RaptorQBlockDecoder(
            transmissionInformation: encoder.transmissionInformation, sourceBlockNumber: 0)
        try decoder.add(esi: 3, symbol: block.symbol(esi: 3))
        #expect(
            try decoder.add(esi: 3, symbol: [UInt8](repeating: 0xEE, count: 16))
                == .needsMore(received: 1, sourceSymbols: 20))
        for esi in 0..<20 where esi != 3 && esi != 7 {
            try decoder.add(esi: UInt32(esi), symbol: block.symbol(esi: UInt32(esi)))
        }
        #expect(decoder.progress == .needsMore(received: 19, sourceSymbols: 20))
        // A repair symbol (two at most) stands in for ESI 7; the kept ESI 3 must be the real one.
        try decoder.add(esi: 20, symbol: block.symbol(esi: 20))
        if decoder.progress != .decoded { try decoder.add(esi: 21, symbol: block.symbol(esi: 21)) }
        #expect(decoder.decodedBlock == data)
    }

    @Test func subBlocksInterleaveAndRoundTrip() throws {
        let data = Self.randomBytes(5000, seed: 7)
        let oti = try RaptorQTransmissionInformation(
            transferLength: 5000, symbolSize: 96, sourceBlocks: 2, subBlocks: 5, alignment: 8)
        #expect(oti.subSymbolSizes == [24, 24, 16, 16, 16])
        let encoder = try RaptorQEncoder(data: data, transmissionInformation: oti)
        var decoder = try RaptorQDecoder(transmissionInformation: oti)
        // Symbol 0 of block 0 is sub-symbol 0 of each sub-block: bytes 0..<24, then K*24 onwards, ...
        let k = oti.sourceSymbols(inBlock: 0)
        let first = try encoder.blocks[0].symbol(esi: 0)
        #expect(Array(first[0..<24]) == Array(data[0..<24]))
        #expect(Array(first[24..<48]) == Array(data[k * 24..<k * 24 + 24]))
        var generator = SplitMix64(seed: 11)
        for packet in try encoder.packets(repairSymbolsPerBlock: 20).shuffled(using: &generator).dropFirst(15) {
            try decoder.add(packet)
        }
        #expect(decoder.progress == .decoded)
        #expect(decoder.decodedObject == data)
    }

    @Test func decoderSaysNeedsMoreUntilItHasEnoughSymbols() throws {
        let data = Self.randomBytes(40 * 32, seed: 3)
        let encoder = try RaptorQEncoder(data: data, symbolSize: 32)
        let block = encoder.blocks[0]
        var decoder = try RaptorQBlockDecoder(
            transmissionInformation: encoder.transmissionInformation, sourceBlockNumber: 0)
        for esi in 0..<39 {
            let progress = try decoder.add(esi: UInt32(esi + 40), symbol: block.symbol(esi: UInt32(esi + 40)))
            #expect(progress == .needsMore(received: esi + 1, sourceSymbols: 40))
        }
        // A repeated symbol does not count.
        #expect(try decoder.add(esi: 40, symbol: block.symbol(esi: 40)) == .needsMore(received: 39, sourceSymbols: 40))
        var esi: UInt32 = 79
        while decoder.progress != .decoded && esi < 100 {
            try decoder.add(esi: esi, symbol: block.symbol(esi: esi))
            esi += 1
        }
        #expect(decoder.decodedBlock == data)
    }

    @Test func damagedPacketsGiveTypedErrors() throws {
        let data = Self.randomBytes(1000, seed: 5)
        let encoder = try RaptorQEncoder(data: data, symbolSize: 64)
        var decoder = try RaptorQDecoder(transmissionInformation: encoder.transmissionInformation)
        let good = try encoder.blocks[0].packet(esi: 3).serialized
        var wrongBlock = good
        wrongBlock[0] = 1
        let cases: [[UInt8]] = [Array(good.dropLast()), good + [0], Array(good.prefix(4)), [1, 2], wrongBlock]
        for bytes in cases {
            #expect {
                try decoder.add(serialized: bytes)
            } throws: { error in
                (error as? CodingError)?.code == .malformedPacket
            }
        }
        #expect(throws: CodingError.self) {
            try RaptorQPacket(sourceBlockNumber: 0, encodingSymbolID: 1 << 24, symbol: [0])
        }
        #expect(throws: CodingError.self) { try encoder.blocks[0].symbol(esi: 1 << 24) }
        // A packet encoded for another OTI (other T) is rejected, not decoded into garbage.
        let other = try RaptorQEncoder(data: data, symbolSize: 32)
        #expect {
            try decoder.add(other.blocks[0].packet(esi: 0))
        } throws: { error in
            (error as? CodingError)?.code == .malformedPacket
        }
        #expect(decoder.progress == .needsMore(blocksLeft: 1))
    }

    /// RFC 6330 section 5.6 (and Annex of the RaptorQ papers): with K' received symbols decoding fails in
    /// fewer than 1% of cases, with K' + 1 in fewer than 0.01%, with K' + 2 in fewer than 0.0001%.
    /// Here: random sets of K + overhead symbols out of source and repair ESIs, seeded.
    @Test func decodeFailureRateAtOverheadZeroOneAndTwo() throws {
        var failures = [0, 0, 0]
        var trials = 0
        var generator = SplitMix64(seed: 6330)
        let t = 8
        for k in [10, 26, 55, 101, 160] {
            let data = Self.randomBytes(k * t, seed: UInt64(k))
            let encoder = try RaptorQEncoder(data: data, symbolSize: t)
            let block = encoder.blocks[0]
            let pool = (0..<UInt32(3 * k)).map { $0 }
            for _ in 0..<120 {
                let chosen = Array(pool.shuffled(using: &generator).prefix(k + 2))
                trials += 1
                for overhead in 0...2 {
                    var decoder = try RaptorQBlockDecoder(
                        transmissionInformation: encoder.transmissionInformation, sourceBlockNumber: 0)
                    for esi in chosen.prefix(k + overhead) { try decoder.add(esi: esi, symbol: block.symbol(esi: esi)) }
                    if decoder.progress == .decoded {
                        #expect(decoder.decodedBlock == data)
                    } else {
                        failures[overhead] += 1
                    }
                }
            }
        }
        print(
            "raptorq failure rate over \(trials) trials: overhead 0 \(failures[0]), 1 \(failures[1]), 2 \(failures[2])")
        #expect(failures[2] * 1000 <= trials, "more than 0.1% failures at K + 2")
        #expect(failures[0] * 100 <= trials * 5, "far more failures at K than RFC 6330's ~1%")
    }
}

@Suite struct FountainPolicyTests {
    /// Above 8% loss the policy says `.fountain`; that group is then RaptorQ-coded and a sender keeps sending
    /// repair symbols over a lossy link until the receiver stops saying "needs more".
    @Test(arguments: [0.09, 0.2, 0.5])
    func aFountainDecisionLeadsToRatelessRaptorQDelivery(lossRate: Double) throws {
        #expect(try AdaptiveRedundancy.decide(dataShards: 16, lossRate: lossRate, ultrafastLink: false) == .fountain)
        let group = RaptorQTests.randomBytes(64 * 1024 + 3, seed: UInt64(lossRate * 100))
        let encoder = try AdaptiveRedundancy.fountainEncoder(group: group, symbolSize: 1024)
        var receiver = try RaptorQDecoder(transmissionInformation: encoder.transmissionInformation)
        var generator = SplitMix64(seed: 99)
        var sent = 0
        for block in encoder.blocks {
            let first = try AdaptiveRedundancy.initialRepairSymbols(
                sourceSymbols: block.sourceSymbols, lossRate: lossRate)
            var esi: UInt32 = 0
            var budget = block.sourceSymbols + first
            while receiver.blocks[block.sourceBlockNumber].progress != .decoded {
                if budget == 0 { budget = 4 }  // the receiver still needs more: send a few more repair symbols
                budget -= 1
                let packet = try block.packet(esi: esi)
                esi += 1
                sent += 1
                if Double.random(in: 0..<1, using: &generator) < lossRate { continue }
                try receiver.add(packet)
                #expect(esi < 4 * UInt32(block.sourceSymbols), "the block never decoded")
                if esi >= 4 * UInt32(block.sourceSymbols) { break }
            }
        }
        #expect(receiver.progress == .decoded)
        #expect(receiver.decodedObject == group)
        #expect(try AdaptiveRedundancy.initialRepairSymbols(sourceSymbols: 100, lossRate: 0.5) == 104)
        #expect(throws: CodingError.self) {
            try AdaptiveRedundancy.initialRepairSymbols(sourceSymbols: 10, lossRate: 1)
        }
    }
}
