import AetherIO
import Foundation
import Testing

@testable import AetherIntegrity

@Suite struct MerkleVectorTests {
    @Test func theVectorFileHasEveryCase() throws {
        let cases = try IntegrityVectors.loadMerkle()
        // 0...70 leaves plus 1000, 4097 and 65537.
        #expect(cases.count == 74)
        #expect(IntegrityVectors.merkleCases.count == cases.count)
        #expect(cases.map(\.leafCount) == Array(0...70) + [1000, 4097, 65537])
        #expect(cases.reduce(0) { $0 + $1.proofs.count } > 200)
    }

    @Test(arguments: IntegrityVectors.merkleCases)
    func streamingTreeReproducesTheRootAndCheckpoint(_ vector: IntegrityVectors.MerkleFile.Case) throws {
        var tree = StreamingMerkleTree()
        for hash in IntegrityVectors.chunkHashes(vector.leafCount) { try tree.append(hash) }
        #expect(tree.root.hex == vector.root)
        #expect(tree.checkpoint.nodes.map(\.hex) == vector.checkpointNodes)
        let restored = StreamingMerkleTree(restoring: tree.checkpoint)
        #expect(restored.root.hex == vector.root)
    }

    @Test(arguments: IntegrityVectors.merkleCases)
    func proofBuilderReproducesEveryProofAndEachVerifies(_ vector: IntegrityVectors.MerkleFile.Case) throws {
        let builder = try MerkleProofBuilder(chunkHashes: IntegrityVectors.chunkHashes(vector.leafCount))
        #expect(builder.root.hex == vector.root)
        let root = try Digest32(hex: vector.root)
        for expected in vector.proofs {
            let proof = try builder.proof(forLeaf: expected.leafIndex)
            #expect(proof.siblings.map(\.hex) == expected.siblings, "leaf \(expected.leafIndex)")
            let fromVector = try MerkleProof(
                leafIndex: UInt64(expected.leafIndex), leafCount: UInt64(vector.leafCount),
                siblings: expected.siblings.map { try Digest32(hex: $0) })
            #expect(
                fromVector.verify(
                    chunkHash: IntegrityVectors.chunkHash(expected.leafIndex), root: root,
                    leafCount: UInt64(vector.leafCount)))
            #expect(
                !fromVector.verify(
                    chunkHash: IntegrityVectors.chunkHash(expected.leafIndex + 1), root: root,
                    leafCount: UInt64(vector.leafCount)))
        }
    }
}
