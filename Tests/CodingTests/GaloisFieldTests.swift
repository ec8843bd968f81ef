import AetherIO
import Testing

@testable import AetherCoding

@Suite struct GaloisFieldTests {
    @Test func everyNonzeroElementOfGF256HasAnInverse() {
        for a in 1...255 {
            let inverse = GF256.inverse(UInt8(a))
            #expect(GF256.multiply(UInt8(a), inverse) == 1, "a = \(a)")
            #expect(GF256.multiplyBitwise(UInt8(a), inverse) == 1, "a = \(a)")
        }
        #expect(GF256.inverse(0) == 0)
    }

    @Test func gf256TablesMatchTheBitwiseMultiplyForEveryPair() {
        var mismatches = 0
        for a in 0...255 {
            for b in 0...255 {
                let expected = GF256.multiplyBitwise(UInt8(a), UInt8(b))
                if GF256.multiply(UInt8(a), UInt8(b)) != expected { mismatches += 1 }
                if GF256.productTable[a << 8 | b] != expected { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
    }

    @Test func twoGeneratesEveryNonzeroElementOfGF256() {
        var seen = Set<UInt8>()
        for power in 0..<255 { seen.insert(GF256.exp(power)) }
        #expect(seen.count == 255)
        #expect(!seen.contains(0))
        #expect(GF256.exp(255) == 1)
        // Known values for 0x11D: 2^8 = 0x1D, 2^9 = 0x3A, 2^25 = 0x03 (log 3 = 25 in the RAID-6 / ISA-L field).
        #expect(GF256.exp(8) == 0x1D)
        #expect(GF256.exp(9) == 0x3A)
        #expect(GF256.exp(25) == 0x03)
    }

    @Test func gf256MultiplicationIsCommutativeAssociativeAndDistributive() {
        var generator = SplitMix64(seed: 1)
        for _ in 0..<5000 {
            let a = UInt8.random(in: 0...255, using: &generator)
            let b = UInt8.random(in: 0...255, using: &generator)
            let c = UInt8.random(in: 0...255, using: &generator)
            #expect(GF256.multiply(a, b) == GF256.multiply(b, a))
            #expect(GF256.multiply(GF256.multiply(a, b), c) == GF256.multiply(a, GF256.multiply(b, c)))
            #expect(GF256.multiply(a, b ^ c) == GF256.multiply(a, b) ^ GF256.multiply(a, c))
        }
    }

    @Test func polynomial0x1100BIsPrimitiveSoTwoGeneratesAllOfGF65536() {
        // The log table is filled by walking powers of 2; primitive means the walk visits all 65,535
        // nonzero elements before returning to 1.
        var seen = [Bool](repeating: false, count: 65536)
        for power in 0..<65535 { seen[Int(GF65536.expTable[power])] = true }
        #expect(seen.dropFirst().allSatisfy { $0 })
        #expect(!seen[0])
        for x in 1..<65536 { #expect(Int(GF65536.expTable[Int(GF65536.logTable[x])]) == x) }
    }

    @Test func gf65536TablesMatchTheBitwiseMultiplyAndInversesExist() {
        var generator = SplitMix64(seed: 2)
        for _ in 0..<20000 {
            let a = UInt16.random(in: 0...UInt16.max, using: &generator)
            let b = UInt16.random(in: 0...UInt16.max, using: &generator)
            #expect(GF65536.multiply(a, b) == GF65536.multiplyBitwise(a, b))
        }
        var bad = 0
        for a in 1...65535 where GF65536.multiply(UInt16(a), GF65536.inverse(UInt16(a))) != 1 { bad += 1 }
        #expect(bad == 0)
    }

    @Test func matrixInverseTimesMatrixIsTheIdentity() throws {
        let encoding = GFMatrix<GF256>.cauchyEncoding(dataShards: 6, totalShards: 10)
        let square = encoding.selectingRows([0, 2, 6, 7, 8, 9])
        let inverse = try square.inverted()
        #expect(square.multiplied(by: inverse) == .identity(6))
        #expect(inverse.multiplied(by: square) == .identity(6))
    }

    @Test func aSingularMatrixIsATypedError() {
        var matrix = GFMatrix<GF256>(rows: 2, columns: 2)
        matrix[0, 0] = 3
        matrix[0, 1] = 5
        matrix[1, 0] = 3
        matrix[1, 1] = 5
        #expect(throws: CodingError.self) { try matrix.inverted() }
        do {
            _ = try matrix.inverted()
        } catch {
            #expect(error.code == .singularMatrix)
        }
    }
}
