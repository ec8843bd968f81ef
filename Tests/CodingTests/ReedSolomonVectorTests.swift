import AetherIO
import Foundation
import Testing

@testable import AetherCoding

@Suite struct ReedSolomonVectorTests {
    struct VectorFile: Decodable {
        struct Vector: Decodable {
            let k: Int
            let m: Int
            let shardLength: Int
            let data: [String]
            let parity: [String]
        }
        let vectors: [Vector]
    }

    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Vectors/reed-solomon-isal.json")

    @Test func parityMatchesEveryISALVectorWithBothKernels() throws {
        let file = try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: Self.path))
        var checked = 0
        for vector in file.vectors {
            let data = try vector.data.map { try Hex.decode($0) }
            let expected = try vector.parity.map { try Hex.decode($0) }
            #expect(data.count == vector.k && expected.count == vector.m)
            #expect(data.allSatisfy { $0.count == vector.shardLength })
            let code = try ReedSolomonCode(dataShards: vector.k, parityShards: vector.m)
            for kernel in [ReedSolomonKernel.automatic, .portable] {
                #expect(try ReedSolomonEncoder(code: code, kernel: kernel).encode(data) == expected, "\(code)")
            }
            checked += 1
        }
        #expect(checked == file.vectors.count)
        #expect(checked == 6)
    }
}
