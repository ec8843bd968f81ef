import AetherIO
import Testing

@testable import AetherIntegrity

@Suite struct ChainVectorTests {
    @Test func theVectorFileHasEveryCase() throws {
        let cases = try IntegrityVectors.loadChain()
        // 0...20, 24, 25, 26, 49, 50, 70, a UTF-8 session id, 1000 and 4097.
        #expect(cases.count == 30)
        #expect(IntegrityVectors.chainCases.count == cases.count)
        #expect(cases.filter { $0.links != nil }.count == 28)
    }

    @Test(arguments: IntegrityVectors.chainCases)
    func chainReproducesGenesisLinksJumpsAndHead(_ vector: IntegrityVectors.ChainFile.Case) throws {
        var chain = try ChunkCommitmentChain(sessionID: vector.sessionID, plannedChunkCount: vector.chunkCount)
        #expect(chain.genesis.hex == vector.genesis)
        #expect(chain.stride == vector.stride)
        let hashes = IntegrityVectors.chunkHashes(vector.chunkCount)
        var links: [Digest32] = []
        for hash in hashes { links.append(chain.append(hash)) }
        #expect(chain.head.hex == vector.head)
        #expect(chain.jumpLinks.map(\.hex) == vector.jumpLinks)
        if let expectedLinks = vector.links { #expect(links.map(\.hex) == expectedLinks) }
        let jumps = try vector.jumpLinks.map { try Digest32(hex: $0) }
        #expect(
            try ChunkCommitmentChain.verifyForward(
                sessionID: vector.sessionID, stride: vector.stride, chunkHashes: hashes, links: links, jumpLinks: jumps)
                == .intact(count: vector.chunkCount))
        #expect(
            try ChunkCommitmentChain.verifyBackward(
                sessionID: vector.sessionID, stride: vector.stride, chunkHashes: hashes, links: links, jumpLinks: jumps)
                == .intact(count: vector.chunkCount))
    }
}
