import AetherCoding
import AetherIO
import Foundation
import Testing

/// Live interop with ISA-L (Debian libisal2, through ctypes in peers/ec_isal.py): same matrix, same
/// parity bytes, and each side decodes the other's shards.
@Suite struct ErasureCodingInteropTests {
    static let length = 4099  // not a multiple of 32: exercises the SIMD kernel's tail too

    static func randomShards(_ count: Int, length: Int) -> [[UInt8]] {
        var generator = SecureRandom()
        return (0..<count).map { _ in (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) } }
    }

    @Test(arguments: [(4, 2), (10, 4), (17, 3), (200, 55), (1, 1), (12, 12)])
    func encodingMatrixEqualsISALsCauchyMatrix(k: Int, m: Int) throws {
        let code = try ReedSolomonCode(dataShards: k, parityShards: m)
        let output = try PythonPeer.run("ec_isal.py", ["matrix", "\(k)", "\(m)"])
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == k + m)
        for (row, line) in lines.enumerated() {
            let ours = (0..<k).map { code.encodingCoefficient(row: row, column: $0) }
            let theirs = try Hex.decode(line).map(Int.init)
            #expect(ours == theirs, "row \(row)")
        }
    }

    @Test(arguments: [(4, 2), (10, 4), (17, 3), (200, 55)])
    func parityEqualsISALsAndEachSideDecodesTheOthersShards(k: Int, m: Int) throws {
        let code = try ReedSolomonCode(dataShards: k, parityShards: m)
        let data = Self.randomShards(k, length: Self.length)
        let encoder = ReedSolomonEncoder(code: code)
        #expect(encoder.usesSIMD == ReedSolomonKernel.simdAvailable)
        let ours = try encoder.encode(data)
        let portable = try ReedSolomonEncoder(code: code, kernel: .portable).encode(data)
        let isal = try PythonPeer.run(
            "ec_isal.py", ["encode", "\(k)", "\(m)", "\(Self.length)"], input: Data(data.joined()))
        #expect(isal.count == m * Self.length)
        #expect(Array(isal) == Array(ours.joined()), "SIMD parity differs from ISA-L")
        #expect(Array(isal) == Array(portable.joined()), "portable parity differs from ISA-L")

        var generator = SecureRandom()
        for round in 0..<3 {
            // Erase m shards, always including some data shards so there is something to rebuild.
            var erased = Set((0..<(k + m)).shuffled(using: &generator).prefix(m - 1))
            erased.insert(round % k)
            let eraseList = erased.sorted().map(String.init).joined(separator: ",")

            // ISA-L decodes Aether's shards.
            var sent = Data()
            for (index, shard) in (data + ours).enumerated() {
                sent.append(contentsOf: erased.contains(index) ? [UInt8](repeating: 0, count: Self.length) : shard)
            }
            let rebuilt = try PythonPeer.run(
                "ec_isal.py", ["decode", "\(k)", "\(m)", "\(Self.length)", eraseList], input: sent)
            #expect(
                Array(rebuilt) == Array(data.joined()), "ISA-L could not decode Aether's shards, erased \(eraseList)")

            // Aether decodes ISA-L's shards.
            var isalShards: [[UInt8]?] = data
            for index in 0..<m {
                isalShards.append(Array(isal[(index * Self.length)..<((index + 1) * Self.length)]))
            }
            for index in erased { isalShards[index] = nil }
            #expect(try code.decode(isalShards) == data, "Aether could not decode ISA-L's shards, erased \(eraseList)")
        }
    }
}
