import AetherIO
import Testing

@testable import AetherCoding

@Suite struct ReedSolomonTests {
    static func randomShards(_ count: Int, length: Int, seed: UInt64) -> [[UInt8]] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) } }
    }

    /// Every subset of `size` elements of 0..<n.
    static func subsets(of n: Int, size: Int) -> [[Int]] {
        guard size > 0 else { return [[]] }
        guard n >= size else { return [] }
        let without = subsets(of: n - 1, size: size)
        let with = subsets(of: n - 1, size: size - 1).map { $0 + [n - 1] }
        return without + with
    }

    @Test func encodingMatrixIsTheIdentityOverISALsCauchyRows() throws {
        let code = try ReedSolomonCode(dataShards: 4, parityShards: 2)
        // Rows from ISA-L's gf_gen_cauchy1_matrix(a, 6, 4) (printed by Tests/Interop/peers/ec_isal.py).
        let expected: [[Int]] = [
            [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1],
            [0x47, 0xA7, 0x7A, 0xBA], [0xA7, 0x47, 0xBA, 0x7A],
        ]
        for row in 0..<6 {
            #expect((0..<4).map { code.encodingCoefficient(row: row, column: $0) } == expected[row])
        }
    }

    @Test(arguments: [(1, 1), (2, 1), (2, 2), (3, 2), (4, 2), (5, 3), (6, 4), (8, 3)])
    func everyErasurePatternUpToMIsRecoveredAndMoreIsTooFew(k: Int, m: Int) throws {
        let code = try ReedSolomonCode(dataShards: k, parityShards: m)
        let data = Self.randomShards(k, length: 67, seed: UInt64(k * 100 + m))
        let parity = try code.encode(data)
        let all = data + parity
        var patterns = 0
        for erased in 0...m {
            for pattern in Self.subsets(of: k + m, size: erased) {
                var shards: [[UInt8]?] = all
                for index in pattern { shards[index] = nil }
                var full = shards
                try code.reconstruct(&full, includingParity: true)
                #expect(full.map { $0 ?? [] } == all, "erased \(pattern)")
                #expect(try code.decode(shards) == data, "erased \(pattern)")
                patterns += 1
            }
        }
        #expect(patterns == (0...m).reduce(0) { $0 + Self.subsets(of: k + m, size: $1).count })
        for pattern in Self.subsets(of: k + m, size: m + 1) {
            var shards: [[UInt8]?] = all
            for index in pattern { shards[index] = nil }
            #expect {
                try code.decode(shards)
            } throws: { error in
                (error as? CodingError)?.code == .tooFewShards
            }
        }
    }

    @Test(arguments: [(200, 55), (100, 30), (17, 3), (10, 4)])
    func randomErasurePatternsOfLargeCodesAreRecovered(k: Int, m: Int) throws {
        let code = try ReedSolomonCode(dataShards: k, parityShards: m)
        let data = Self.randomShards(k, length: 100, seed: UInt64(k))
        let all = data + (try code.encode(data))
        var generator = SplitMix64(seed: UInt64(m))
        for _ in 0..<6 {
            let erased = Array(
                (0..<(k + m)).shuffled(using: &generator).prefix(Int.random(in: 1...m, using: &generator)))
            var shards: [[UInt8]?] = all
            for index in erased { shards[index] = nil }
            try code.reconstruct(&shards, includingParity: true)
            #expect(shards.map { $0 ?? [] } == all, "erased \(erased.sorted())")
        }
    }

    @Test(arguments: [0, 1, 15, 31, 32, 33, 64, 100, 1000, 4099])
    func simdAndPortableKernelsGiveIdenticalBytes(length: Int) throws {
        for m in [1, 2, 3, 4, 5, 6, 7, 12, 14] {
            let k = 10
            let code = try ReedSolomonCode(dataShards: k, parityShards: m)
            let fast = ReedSolomonEncoder(code: code)
            let portable = ReedSolomonEncoder(code: code, kernel: .portable)
            #expect(!portable.usesSIMD)
            #expect(fast.usesSIMD == ReedSolomonKernel.simdAvailable)
            let data = Self.randomShards(k, length: length, seed: UInt64(length * 31 + m))
            let fastParity = try fast.encode(data)
            #expect(fastParity == (try portable.encode(data)), "m = \(m)")
            // And against the definition: parity row i = sum over j of coefficient(i, j) * data j.
            for row in 0..<m {
                var expected = [UInt8](repeating: 0, count: length)
                for column in 0..<k {
                    let c = UInt8(code.encodingCoefficient(row: k + row, column: column))
                    for index in 0..<length { expected[index] ^= GF256.multiplyBitwise(c, data[column][index]) }
                }
                #expect(fastParity[row] == expected, "m = \(m), row \(row)")
            }
        }
    }

    @Test func simdAndPortableDecodersRebuildTheSameBytes() throws {
        let code = try ReedSolomonCode(dataShards: 10, parityShards: 4)
        let stripeFast = try ShardStripe(code: code, shardCapacity: 1000)
        let stripePortable = try ShardStripe(code: code, shardCapacity: 1000)
        let data = Self.randomShards(14, length: 1000, seed: 7)
        for index in 0..<14 {
            try stripeFast.setShard(index, to: data[index])
            try stripePortable.setShard(index, to: data[index])
        }
        try ReedSolomonEncoder(code: code).encode(stripeFast, shardLength: 1000)
        let encoded = (0..<14).map { stripeFast.bytes(ofShard: $0) }
        let present = (0..<14).map { ![0, 3, 5, 9].contains($0) }
        for index in [0, 3, 5, 9] {
            stripeFast.clearShard(index)
            try stripePortable.setShard(index, to: [])
        }
        for index in 10..<14 { try stripePortable.setShard(index, to: encoded[index]) }
        let fast = try ReedSolomonDecoder(code: code, present: present)
        let portable = try ReedSolomonDecoder(code: code, present: present, kernel: .portable)
        #expect(fast.missingDataShards == [0, 3, 5, 9])
        #expect(fast.inputShards == [1, 2, 4, 6, 7, 8, 10, 11, 12, 13])
        try fast.reconstruct(stripeFast, shardLength: 1000)
        try portable.reconstruct(stripePortable, shardLength: 1000)
        for index in 0..<10 {
            #expect(stripeFast.bytes(ofShard: index) == encoded[index])
            #expect(stripePortable.bytes(ofShard: index) == encoded[index])
        }
    }

    @Test func gf65536CodesWithMoreThan255ShardsRoundTrip() throws {
        let code = try ReedSolomonCode(dataShards: 270, parityShards: 16)
        #expect(code.field == .gf65536)
        let data = Self.randomShards(270, length: 40, seed: 65536)
        let parity = try code.encode(data)
        let all = data + parity
        var generator = SplitMix64(seed: 9)
        for _ in 0..<3 {
            var shards: [[UInt8]?] = all
            for index in (0..<286).shuffled(using: &generator).prefix(16) { shards[index] = nil }
            try code.reconstruct(&shards, includingParity: true)
            #expect(shards.map { $0 ?? [] } == all)
        }
        // Parity matches the definition in GF(2^16), little-endian symbols.
        var expected = [UInt16](repeating: 0, count: 20)
        for column in 0..<270 {
            let c = UInt16(code.encodingCoefficient(row: 270, column: column))
            for symbol in 0..<20 {
                let value = UInt16(data[column][2 * symbol]) | UInt16(data[column][2 * symbol + 1]) << 8
                expected[symbol] ^= GF65536.multiplyBitwise(c, value)
            }
        }
        #expect(parity[0] == expected.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
    }

    @Test func aSmallCodeCanBeForcedIntoGF65536AndStillRoundTrips() throws {
        let code = try ReedSolomonCode(dataShards: 3, parityShards: 2, field: .gf65536)
        let data = Self.randomShards(3, length: 8, seed: 3)
        var shards: [[UInt8]?] = data + (try code.encode(data))
        shards[0] = nil
        shards[2] = nil
        #expect(try code.decode(shards) == data)
    }

    @Test(arguments: [(0, 1, nil), (1, -1, nil), (250, 7, ReedSolomonField.gf256), (65000, 600, nil)])
    func badParametersAreTypedErrors(k: Int, m: Int, field: ReedSolomonField?) {
        #expect {
            try ReedSolomonCode(dataShards: k, parityShards: m, field: field)
        } throws: { error in
            (error as? CodingError)?.code == .invalidParameters
        }
    }

    @Test func fieldIsGF256UpTo256ShardsAndGF65536Above() throws {
        #expect(try ReedSolomonCode(dataShards: 200, parityShards: 56).field == .gf256)
        #expect(try ReedSolomonCode(dataShards: 200, parityShards: 57).field == .gf65536)
    }

    @Test func shardsOfDifferentLengthsAreASizeMismatch() throws {
        let code = try ReedSolomonCode(dataShards: 2, parityShards: 1)
        #expect {
            try code.encode([[1, 2, 3], [4, 5]])
        } throws: { error in
            (error as? CodingError)?.code == .shardSizeMismatch
        }
        #expect {
            try code.decode([[1, 2, 3], nil, [4, 5]])
        } throws: { error in
            (error as? CodingError)?.code == .shardSizeMismatch
        }
        let wide = try ReedSolomonCode(dataShards: 2, parityShards: 1, field: .gf65536)
        #expect {
            try wide.encode([[1, 2, 3], [4, 5, 6]])
        } throws: { error in
            (error as? CodingError)?.code == .shardSizeMismatch
        }
    }

    @Test func stripesOfTheWrongShapeAreRejected() throws {
        let code = try ReedSolomonCode(dataShards: 4, parityShards: 2)
        let encoder = ReedSolomonEncoder(code: code)
        let wrongCount = try ShardStripe(shardCount: 5, shardCapacity: 16)
        #expect {
            try encoder.encode(wrongCount, shardLength: 16)
        } throws: { error in
            (error as? CodingError)?.code == .invalidParameters
        }
        let stripe = try ShardStripe(code: code, shardCapacity: 16)
        #expect {
            try encoder.encode(stripe, shardLength: 17)
        } throws: { error in
            (error as? CodingError)?.code == .shardSizeMismatch
        }
        #expect {
            try ReedSolomonDecoder(code: code, present: [true, true, true])
        } throws: { error in
            (error as? CodingError)?.code == .invalidParameters
        }
    }

    @Test func aShorterLengthOnlyTouchesThatPrefixOfTheParity() throws {
        let code = try ReedSolomonCode(dataShards: 3, parityShards: 2)
        let stripe = try ShardStripe(code: code, shardCapacity: 64)
        let data = Self.randomShards(3, length: 64, seed: 11)
        for index in 0..<3 { try stripe.setShard(index, to: data[index]) }
        try stripe.setShard(3, to: [UInt8](repeating: 0xEE, count: 64))
        try ReedSolomonEncoder(code: code).encode(stripe, shardLength: 40)
        let full = try code.encode(data.map { Array($0.prefix(40)) })
        #expect(Array(stripe.bytes(ofShard: 3).prefix(40)) == full[0])
        #expect(stripe.bytes(ofShard: 3).suffix(24).allSatisfy { $0 == 0xEE })
    }

    @Test func setShardCopiesContiguousAndOtherCollectionsAndZeroFillsTheRest() throws {
        let stripe = try ShardStripe(shardCount: 2, shardCapacity: 8)
        try stripe.setShard(0, to: [UInt8](repeating: 0xFF, count: 8))
        try stripe.setShard(0, to: [1, 2, 3])
        try stripe.setShard(1, to: [UInt8](repeating: 0xFF, count: 8))
        try stripe.setShard(1, to: repeatElement(UInt8(9), count: 5))
        #expect(stripe.bytes(ofShard: 0) == [1, 2, 3, 0, 0, 0, 0, 0])
        #expect(stripe.bytes(ofShard: 1) == [9, 9, 9, 9, 9, 0, 0, 0])
        #expect {
            try stripe.setShard(0, to: [UInt8](repeating: 1, count: 9))
        } throws: { error in
            (error as? CodingError)?.code == .shardSizeMismatch
        }
    }

    @Test(arguments: [-1, 2, Int.max])
    func setShardThrowsForAnIndexOutsideTheStripeInsteadOfTrapping(index: Int) throws {
        let stripe = try ShardStripe(shardCount: 2, shardCapacity: 8)
        try stripe.setShard(1, to: [7])
        #expect {
            try stripe.setShard(index, to: [1, 2, 3])
        } throws: { error in
            (error as? CodingError)?.code == .invalidParameters
        }
        #expect(stripe.bytes(ofShard: 0) == [UInt8](repeating: 0, count: 8))
        #expect(stripe.bytes(ofShard: 1) == [7, 0, 0, 0, 0, 0, 0, 0])
    }
}
