public import AetherIO
import Synchronization

/// The one owner of a session's Merkle tree and commitment chain (RACE-5): appending a chunk adds
/// its Merkle leaf and its chain link in one synchronous call under one lock, so no other append
/// can interleave between the two and both structures always cover the same chunks in the same order.
///
/// Safe to share between tasks; each call is short (three SHA-256 compressions at most plus carries).
public final class ChunkIntegrityLedger: Sendable {
    /// What one append produced.
    public struct Entry: Sendable, Hashable {
        /// The chunk's position (0-based).
        public let index: Int
        /// The chain link committing to this chunk.
        public let link: Digest32
        /// Whether the caller should persist `checkpoint()` now (a carry merge, or every 16 leaves).
        public let checkpointDue: Bool
    }

    private struct State {
        var tree: StreamingMerkleTree
        var chain: ChunkCommitmentChain
    }

    private let state: Mutex<State>

    /// A fresh ledger for a session of about `plannedChunkCount` chunks.
    public init(sessionID: String, plannedChunkCount: Int) throws(IntegrityError) {
        let chain = try ChunkCommitmentChain(sessionID: sessionID, plannedChunkCount: plannedChunkCount)
        state = Mutex(State(tree: StreamingMerkleTree(), chain: chain))
    }

    /// Resumes from a checkpoint; throws `.malformedProof` when its tree and chain cover different counts.
    public init(restoring checkpoint: IntegrityCheckpoint) throws(IntegrityError) {
        guard checkpoint.merkle.leafCount == UInt64(checkpoint.chain.count) else {
            throw IntegrityError(.malformedProof, "checkpoint tree and chain cover different chunk counts")
        }
        state = Mutex(
            State(
                tree: StreamingMerkleTree(restoring: checkpoint.merkle),
                chain: ChunkCommitmentChain(restoring: checkpoint.chain)))
    }

    /// Adds the next chunk's Merkle leaf and chain link atomically.
    public func append(chunkHash: Digest32) throws(IntegrityError) -> Entry {
        try state.withLock { (state) throws(IntegrityError) -> Entry in
            // The tree is the only step that can fail, so it goes first: on failure neither changed.
            let due = try state.tree.append(chunkHash)
            let link = state.chain.append(chunkHash)
            return Entry(index: state.chain.count - 1, link: link, checkpointDue: due)
        }
    }

    /// Chunks committed.
    public var count: Int { state.withLock { $0.chain.count } }

    /// The Merkle root over the chunks so far.
    public var merkleRoot: Digest32 { state.withLock { $0.tree.root } }

    /// The newest chain link.
    public var chainHead: Digest32 { state.withLock { $0.chain.head } }

    /// Root, head and count read together (consistent with each other).
    public var summary: (count: Int, merkleRoot: Digest32, chainHead: Digest32) {
        state.withLock { ($0.chain.count, $0.tree.root, $0.chain.head) }
    }

    /// Both structures' state, taken together under the lock.
    public func checkpoint() -> IntegrityCheckpoint {
        state.withLock { IntegrityCheckpoint(validMerkle: $0.tree.checkpoint, chain: $0.chain.checkpoint) }
    }
}
