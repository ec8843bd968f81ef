import AetherIO
import Foundation
import Testing

@testable import AetherIntegrity

@Suite struct ChunkIntegrityLedgerTests {
    @Test func oneAppendAddsTheLeafAndTheLinkTogether() throws {
        let ledger = try ChunkIntegrityLedger(sessionID: "s", plannedChunkCount: 40)
        var tree = StreamingMerkleTree()
        var chain = try ChunkCommitmentChain(sessionID: "s", plannedChunkCount: 40)
        for (index, hash) in IntegrityVectors.chunkHashes(40).enumerated() {
            let entry = try ledger.append(chunkHash: hash)
            let due = try tree.append(hash)
            #expect(entry.index == index)
            #expect(entry.link == chain.append(hash))
            #expect(entry.checkpointDue == due)
        }
        let summary = ledger.summary
        #expect(summary.count == 40)
        #expect(summary.merkleRoot == tree.root)
        #expect(summary.chainHead == chain.head)
    }

    /// RACE-5: whatever the interleaving of concurrent appends, the tree and the chain hold the
    /// chunks in the same order (the order of the indices the ledger handed out).
    @Test func concurrentAppendsKeepTreeAndChainInTheSameOrder() async throws {
        let ledger = try ChunkIntegrityLedger(sessionID: "race", plannedChunkCount: 800)
        let hashes = IntegrityVectors.chunkHashes(800)
        let entries = try await withThrowingTaskGroup(of: [(Int, Digest32)].self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var mine: [(Int, Digest32)] = []
                    for k in stride(from: worker, to: 800, by: 8) {
                        let entry = try ledger.append(chunkHash: hashes[k])
                        mine.append((entry.index, hashes[k]))
                        await Task.yield()
                    }
                    return mine
                }
            }
            var all: [(Int, Digest32)] = []
            for try await part in group { all += part }
            return all
        }
        let ordered = entries.sorted { $0.0 < $1.0 }.map(\.1)
        #expect(Set(entries.map(\.0)) == Set(0..<800))
        var tree = StreamingMerkleTree()
        var chain = try ChunkCommitmentChain(sessionID: "race", plannedChunkCount: 800)
        for hash in ordered {
            try tree.append(hash)
            chain.append(hash)
        }
        #expect(ledger.merkleRoot == tree.root)
        #expect(ledger.chainHead == chain.head)
    }

    @Test func restoringACheckpointResumesBoth() throws {
        let hashes = IntegrityVectors.chunkHashes(45)
        let full = try ChunkIntegrityLedger(sessionID: "r", plannedChunkCount: 45)
        for hash in hashes { _ = try full.append(chunkHash: hash) }
        let partial = try ChunkIntegrityLedger(sessionID: "r", plannedChunkCount: 45)
        for hash in hashes[..<29] { _ = try partial.append(chunkHash: hash) }
        let data = try JSONEncoder().encode(partial.checkpoint())
        let resumed = try ChunkIntegrityLedger(
            restoring: try JSONDecoder().decode(IntegrityCheckpoint.self, from: data))
        #expect(resumed.count == 29)
        for hash in hashes[29...] { _ = try resumed.append(chunkHash: hash) }
        #expect(resumed.merkleRoot == full.merkleRoot)
        #expect(resumed.chainHead == full.chainHead)
    }

    @Test func aCheckpointWhoseTreeAndChainDisagreeIsRejected() throws {
        let a = try ChunkIntegrityLedger(sessionID: "r", plannedChunkCount: 9)
        let b = try ChunkIntegrityLedger(sessionID: "r", plannedChunkCount: 9)
        _ = try a.append(chunkHash: IntegrityVectors.chunkHash(0))
        #expect(throws: IntegrityError.self) {
            try IntegrityCheckpoint(merkle: a.checkpoint().merkle, chain: b.checkpoint().chain)
        }
    }
}
