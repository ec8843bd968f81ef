import AetherIO
import Foundation
import Testing

@testable import AetherIntegrity

@Suite struct StreamingMerkleTreeTests {
    @Test func anEmptyTreeHasTheEmptyRootAndOneLeafIsItsOwnRoot() throws {
        var tree = StreamingMerkleTree()
        #expect(tree.root == SHA256.hash([UInt8]()))
        let hash = IntegrityVectors.chunkHash(0)
        try tree.append(hash)
        #expect(tree.root == MerkleHash.leaf(index: 0, chunkHash: hash))
    }

    @Test func leafAndNodeHashesFollowTheDocumentedLayout() throws {
        let chunk = IntegrityVectors.chunkHash(7)
        let leafMessage: [UInt8] = [0x00, 0x05, 0x01, 0x00, 0x00] + chunk.bytes
        #expect(MerkleHash.leaf(index: 0x105, chunkHash: chunk) == SHA256.hash(leafMessage))
        let other = IntegrityVectors.chunkHash(8)
        #expect(
            MerkleHash.node(level: 3, left: chunk, right: other)
                == SHA256.hash([0x01, 0x03] + chunk.bytes + other.bytes))
    }

    @Test func restoringAnyCheckpointGivesTheUninterruptedRoot() throws {
        let hashes = IntegrityVectors.chunkHashes(100)
        var full = StreamingMerkleTree()
        for hash in hashes { try full.append(hash) }
        for cut in 0...100 {
            var first = StreamingMerkleTree()
            for hash in hashes[..<cut] { try first.append(hash) }
            let data = try JSONEncoder().encode(first.checkpoint)
            var resumed = StreamingMerkleTree(restoring: try JSONDecoder().decode(MerkleCheckpoint.self, from: data))
            for hash in hashes[cut...] { try resumed.append(hash) }
            #expect(resumed.root == full.root, "cut at \(cut)")
            #expect(resumed.leafCount == 100)
        }
    }

    @Test func aCheckpointIsDueAfterEveryCarryMergeAndEvery16Leaves() throws {
        var tree = StreamingMerkleTree()
        for index in 0..<200 {
            let due = try tree.append(IntegrityVectors.chunkHash(index))
            // Appending leaf `index` merges exactly when `index` is odd (its lowest bit was set).
            let merged = index % 2 == 1
            #expect(due == (merged || (index + 1) % 16 == 0), "leaf \(index)")
        }
    }

    @Test func checkpointsWithTheWrongShapeAreRejected() throws {
        let node = IntegrityVectors.chunkHash(1)
        #expect(throws: IntegrityError.self) { try MerkleCheckpoint(leafCount: 3, nodes: [node]) }
        #expect(throws: IntegrityError.self) { try MerkleCheckpoint(leafCount: (1 << 32) + 1, nodes: [node, node]) }
        let good = #"{"leafCount":1,"nodes":["\#(node.hex)"]}"#
        #expect(try JSONDecoder().decode(MerkleCheckpoint.self, from: Data(good.utf8)).leafCount == 1)
        let bad = [
            #"{"leafCount":2,"nodes":["\#(node.hex)","\#(node.hex)"]}"#,
            #"{"leafCount":1,"nodes":["\#(node.hex.uppercased())"]}"#,
            #"{"leafCount":1,"nodes":["\#(node.hex)"],"extra":1}"#,
            #"{"leafCount":1,"nodes":["\#(node.hex.dropLast(2))"]}"#,
        ]
        for text in bad {
            #expect(throws: (any Error).self, "\(text)") {
                try JSONDecoder().decode(MerkleCheckpoint.self, from: Data(text.utf8))
            }
        }
    }

    @Test func aFullTreeRefusesAnotherLeaf() throws {
        let node = IntegrityVectors.chunkHash(1)
        var tree = StreamingMerkleTree(restoring: try MerkleCheckpoint(leafCount: 1 << 32, nodes: [node]))
        #expect(tree.root == node)
        #expect(throws: IntegrityError.self) { try tree.append(node) }
    }

    @Test func everyLeafOfEverySmallTreeHasAVerifyingProof() throws {
        for count in 1...40 {
            let hashes = IntegrityVectors.chunkHashes(count)
            let builder = try MerkleProofBuilder(chunkHashes: hashes)
            var tree = StreamingMerkleTree()
            for hash in hashes { try tree.append(hash) }
            #expect(builder.root == tree.root)
            for index in 0..<count {
                let proof = try builder.proof(forLeaf: index)
                #expect(proof.verify(chunkHash: hashes[index], root: tree.root, leafCount: UInt64(count)))
                // The same siblings claimed for a neighbouring leaf must not verify.
                if let moved = try? MerkleProof(
                    leafIndex: UInt64((index + 1) % count), leafCount: UInt64(count), siblings: proof.siblings),
                    count > 1
                {
                    #expect(!moved.verify(chunkHash: hashes[index], root: tree.root, leafCount: UInt64(count)))
                }
            }
        }
    }

    /// Leaf 157 has the same path shape in trees of 300 and 452 leaves, so the root alone cannot
    /// tell the counts apart: verification takes the count from the verifier, not the proof.
    @Test func aProofClaimingAnotherLeafCountWithTheSamePathIsRejected() throws {
        let hashes = IntegrityVectors.chunkHashes(300)
        let builder = try MerkleProofBuilder(chunkHashes: hashes)
        let proof = try builder.proof(forLeaf: 157)
        let relabelled = try MerkleProof(leafIndex: 157, leafCount: 452, siblings: proof.siblings)
        #expect(relabelled.root(forChunkHash: hashes[157]) == builder.root)
        #expect(!relabelled.verify(chunkHash: hashes[157], root: builder.root, leafCount: 300))
        #expect(proof.verify(chunkHash: hashes[157], root: builder.root, leafCount: 300))
    }

    @Test func proofsRoundTripThroughBothEncodings() throws {
        let builder = try MerkleProofBuilder(chunkHashes: IntegrityVectors.chunkHashes(37))
        let proof = try builder.proof(forLeaf: 21)
        #expect(try MerkleProof(serialized: proof.serialized()) == proof)
        #expect(try JSONDecoder().decode(MerkleProof.self, from: JSONEncoder().encode(proof)) == proof)
    }

    @Test func binaryProofParsingIsStrict() throws {
        let proof = try MerkleProofBuilder(chunkHashes: IntegrityVectors.chunkHashes(37)).proof(forLeaf: 21)
        let bytes = proof.serialized()
        let malformed: [[UInt8]] = [
            bytes + [0],  // trailing garbage
            Array(bytes.dropLast()),  // truncated
            [0x42] + bytes.dropFirst(),  // bad magic
            [],
            // sibling count says one fewer, length adjusted: wrong shape for leaf 21 of 37
            Array(bytes[0..<20]) + [bytes[20] - 1] + Array(bytes[21..<(bytes.count - 32)]),
        ]
        for input in malformed {
            #expect(throws: IntegrityError.self) { try MerkleProof(serialized: input) }
        }
        var outOfRange = bytes
        outOfRange[4] = 40  // leaf index 40 of 37
        #expect(throws: IntegrityError.self) { try MerkleProof(serialized: outOfRange) }
        #expect(throws: IntegrityError.self) { try MerkleProofBuilder(chunkHashes: []).proof(forLeaf: 0) }
    }

    @Test func jsonProofParsingIsStrict() throws {
        let sibling = IntegrityVectors.chunkHash(3).hex
        let bad = [
            #"{"leafIndex":0,"leafCount":2,"siblings":[]}"#,
            #"{"leafIndex":2,"leafCount":2,"siblings":["\#(sibling)"]}"#,
            #"{"leafIndex":0,"leafCount":2,"siblings":["\#(sibling.uppercased())"]}"#,
            #"{"leafIndex":0,"leafCount":2,"siblings":["\#(sibling)"],"direction":"left"}"#,
        ]
        for text in bad {
            #expect(throws: (any Error).self, "\(text)") {
                try JSONDecoder().decode(MerkleProof.self, from: Data(text.utf8))
            }
        }
        let good = #"{"leafIndex":0,"leafCount":2,"siblings":["\#(sibling)"]}"#
        #expect(try JSONDecoder().decode(MerkleProof.self, from: Data(good.utf8)).leafCount == 2)
    }
}
