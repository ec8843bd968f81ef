import AetherIO
import Foundation
import Testing

/// The vector files under Vectors/, located from this file's path.
enum IntegrityVectors {
    struct MerkleFile: Decodable {
        struct Proof: Decodable, Sendable {
            let leafIndex: Int
            let siblings: [String]
        }
        struct Case: Decodable, Sendable, CustomTestStringConvertible {
            let leafCount: Int
            let root: String
            let checkpointNodes: [String]
            let proofs: [Proof]
            var testDescription: String { "\(leafCount) leaves" }
        }
        let cases: [Case]
    }

    struct ChainFile: Decodable {
        struct Case: Decodable, Sendable, CustomTestStringConvertible {
            let sessionID: String
            let chunkCount: Int
            let genesis: String
            let stride: Int
            let head: String
            let jumpLinks: [String]
            let links: [String]?
            var testDescription: String { "\(chunkCount) chunks (\(sessionID))" }
        }
        let cases: [Case]
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Vectors")

    static func loadMerkle() throws -> [MerkleFile.Case] {
        try JSONDecoder().decode(
            MerkleFile.self, from: Data(contentsOf: directory.appendingPathComponent("merkle.json"))
        )
        .cases
    }

    static func loadChain() throws -> [ChainFile.Case] {
        try JSONDecoder().decode(
            ChainFile.self, from: Data(contentsOf: directory.appendingPathComponent("commitment_chain.json"))
        ).cases
    }

    /// Cases for `@Test(arguments:)`; a load failure gives none, which the count tests catch.
    static let merkleCases: [MerkleFile.Case] = (try? loadMerkle()) ?? []
    static let chainCases: [ChainFile.Case] = (try? loadChain()) ?? []

    /// The vector files' chunk hash i: SHA-256("aether-vector-chunk" || LE32(i)).
    static func chunkHash(_ index: Int) -> Digest32 {
        var bytes = Array("aether-vector-chunk".utf8)
        unsafe withUnsafeBytes(of: UInt32(index).littleEndian) { unsafe bytes.append(contentsOf: $0) }
        return SHA256.hash(bytes)
    }

    static func chunkHashes(_ count: Int) -> [Digest32] { (0..<count).map(chunkHash) }
}
