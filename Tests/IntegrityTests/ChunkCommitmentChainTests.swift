import AetherIO
import Foundation
import Testing

@testable import AetherIntegrity

@Suite struct ChunkCommitmentChainTests {
    private func build(_ count: Int, session: String = "s1") throws -> (ChunkCommitmentChain, [Digest32], [Digest32]) {
        var chain = try ChunkCommitmentChain(sessionID: session, plannedChunkCount: count)
        let hashes = IntegrityVectors.chunkHashes(count)
        let links = hashes.map { chain.append($0) }
        return (chain, hashes, links)
    }

    @Test func strideIsTheExactCeilingOfTheSquareRoot() {
        for n in 0...20_000 {
            let s = ChunkCommitmentChain.stride(forChunkCount: n)
            #expect(s >= 1)
            #expect(s * s >= n, "n = \(n)")
            #expect(s == 1 || (s - 1) * (s - 1) < n, "n = \(n)")
        }
        #expect(ChunkCommitmentChain.stride(forChunkCount: 1_000_000) == 1000)
        #expect(ChunkCommitmentChain.stride(forChunkCount: 1_000_001) == 1001)
    }

    @Test func linksFollowTheDocumentedFormula() throws {
        let (_, hashes, links) = try build(3)
        let genesis = SHA256.hash(Array("Aether3D_CC_GENESIS_s1".utf8))
        #expect(links[0] == SHA256.hash(Array("CCv1".utf8) + [0] + hashes[0].bytes + genesis.bytes))
        #expect(links[1] == SHA256.hash(Array("CCv1".utf8) + [0] + hashes[1].bytes + links[0].bytes))
    }

    @Test func anEmptySessionIDIsRejected() {
        #expect(throws: IntegrityError.self) { try ChunkCommitmentChain(sessionID: "", plannedChunkCount: 3) }
    }

    @Test func forwardVerificationNamesTheFirstBrokenLink() throws {
        let (chain, hashes, links) = try build(50)
        for bad in [0, 6, 7, 13, 49] {
            var tampered = links
            tampered[bad] = IntegrityVectors.chunkHash(999)
            #expect(
                try ChunkCommitmentChain.verifyForward(
                    sessionID: "s1", stride: chain.stride, chunkHashes: hashes, links: tampered,
                    jumpLinks: chain.jumpLinks)
                    == .broken(atChunk: bad))
            var wrongChunk = hashes
            wrongChunk[bad] = IntegrityVectors.chunkHash(999)
            #expect(
                try ChunkCommitmentChain.verifyForward(
                    sessionID: "s1", stride: chain.stride, chunkHashes: wrongChunk, links: links,
                    jumpLinks: chain.jumpLinks)
                    == .broken(atChunk: bad))
        }
        #expect(
            try ChunkCommitmentChain.verifyForward(
                sessionID: "s2", stride: chain.stride, chunkHashes: hashes, links: links, jumpLinks: chain.jumpLinks)
                == .broken(atChunk: 0))
    }

    @Test func forwardVerificationChecksJumpLinks() throws {
        let (chain, hashes, links) = try build(50)  // stride 8: jumps close at chunks 7, 15, ..., 47
        #expect(chain.stride == 8)
        #expect(chain.jumpLinks.count == 6)
        var jumps = chain.jumpLinks
        jumps[2] = IntegrityVectors.chunkHash(5)
        #expect(
            try ChunkCommitmentChain.verifyForward(
                sessionID: "s1", stride: 8, chunkHashes: hashes, links: links, jumpLinks: jumps) == .broken(atChunk: 23)
        )
    }

    @Test func backwardVerificationChecksTheOpenSegmentAndTheJumpChain() throws {
        let (chain, hashes, links) = try build(50)
        func backward(_ links: [Digest32], _ jumps: [Digest32]) throws -> ChainVerification {
            try ChunkCommitmentChain.verifyBackward(
                sessionID: "s1", stride: 8, chunkHashes: hashes, links: links, jumpLinks: jumps)
        }
        #expect(try backward(links, chain.jumpLinks) == .intact(count: 50))
        var tail = links
        tail[49] = IntegrityVectors.chunkHash(1)
        #expect(try backward(tail, chain.jumpLinks) == .broken(atChunk: 49))
        var jumps = chain.jumpLinks
        jumps[1] = IntegrityVectors.chunkHash(1)
        #expect(try backward(links, jumps) == .broken(atChunk: 23))
        var boundary = links
        boundary[31] = IntegrityVectors.chunkHash(1)
        #expect(try backward(boundary, chain.jumpLinks) == .broken(atChunk: 31))
        #expect(
            try ChunkCommitmentChain.verifyBackward(
                sessionID: "other", stride: 8, chunkHashes: hashes, links: links, jumpLinks: chain.jumpLinks)
                == .broken(atChunk: 7))
    }

    @Test func prefixesWithTheWrongShapeThrow() throws {
        let (chain, hashes, links) = try build(20)
        #expect(throws: IntegrityError.self) {
            try ChunkCommitmentChain.verifyForward(
                sessionID: "s1", stride: chain.stride, chunkHashes: hashes, links: Array(links.dropLast()),
                jumpLinks: chain.jumpLinks)
        }
        #expect(throws: IntegrityError.self) {
            try ChunkCommitmentChain.verifyBackward(
                sessionID: "s1", stride: chain.stride, chunkHashes: hashes, links: links,
                jumpLinks: Array(chain.jumpLinks.dropLast()))
        }
        #expect(throws: IntegrityError.self) {
            try ChunkCommitmentChain.verifyForward(
                sessionID: "s1", stride: 0, chunkHashes: hashes, links: links, jumpLinks: chain.jumpLinks)
        }
    }

    @Test func aRestoredChainContinuesToTheSameHeadAndJumps() throws {
        let (full, hashes, _) = try build(70)
        for cut in [0, 1, 8, 9, 35, 69, 70] {
            var first = try ChunkCommitmentChain(sessionID: "s1", plannedChunkCount: 70)
            for hash in hashes[..<cut] { first.append(hash) }
            let data = try JSONEncoder().encode(first.checkpoint)
            var resumed = ChunkCommitmentChain(restoring: try JSONDecoder().decode(ChainCheckpoint.self, from: data))
            for hash in hashes[cut...] { resumed.append(hash) }
            #expect(resumed.head == full.head, "cut \(cut)")
            #expect(resumed.jumpLinks == full.jumpLinks, "cut \(cut)")
        }
    }

    @Test func chainCheckpointsWithAnImpossibleShapeAreRejected() throws {
        let genesis = ChunkCommitmentChain.genesis(sessionID: "s1")
        #expect(throws: IntegrityError.self) {
            try ChainCheckpoint(sessionID: "s1", stride: 3, count: 7, head: genesis, jumpLinks: [])
        }
        #expect(throws: IntegrityError.self) {
            try ChainCheckpoint(
                sessionID: "s1", stride: 3, count: 0, head: IntegrityVectors.chunkHash(0), jumpLinks: [])
        }
        #expect(throws: IntegrityError.self) {
            try ChainCheckpoint(sessionID: "", stride: 3, count: 0, head: genesis, jumpLinks: [])
        }
        let extra = #"{"count":0,"head":"\#(genesis.hex)","jumpLinks":[],"sessionID":"s1","stride":1,"x":0}"#
        #expect(throws: (any Error).self) { try JSONDecoder().decode(ChainCheckpoint.self, from: Data(extra.utf8)) }
    }

    // Found by the `checkpoint` fuzz target: count Int.max with one jump link of stride Int.max decoded,
    // and the next append after restoring it trapped on overflow.
    @Test func chainCheckpointsCountingPastTheMerkleLimitAreRejected() throws {
        let huge =
            #"{"count":9223372036854775807,"head":"\#(String(repeating: "11", count: 32))","#
            + #""jumpLinks":["\#(String(repeating: "22", count: 32))"],"sessionID":"s","stride":9223372036854775807}"#
        #expect(throws: IntegrityError.self) { try JSONDecoder().decode(ChainCheckpoint.self, from: Data(huge.utf8)) }
        let head = IntegrityVectors.chunkHash(0)
        let limit = Int(StreamingMerkleTree.maximumLeafCount)
        let atLimit = try ChainCheckpoint(sessionID: "s", stride: limit, count: limit, head: head, jumpLinks: [head])
        var chain = ChunkCommitmentChain(restoring: atLimit)
        chain.append(head)
        #expect(chain.count == limit + 1)
        #expect(throws: IntegrityError.self) {
            try ChainCheckpoint(sessionID: "s", stride: limit + 1, count: limit + 1, head: head, jumpLinks: [head])
        }
    }
}
