public import AetherIO

extension ChunkCommitmentChain {
    /// Forward verification of a resumed prefix: recomputes every link from the genesis over
    /// `chunkHashes` and compares it with the stored `links[i]`, and each jump link where one closes.
    ///
    /// O(m) hashes. Returns `.broken(atChunk:)` naming the first chunk whose link (or the jump link
    /// closing at it) differs, so an uploader resumes from the longest intact prefix.
    /// Throws `.malformedProof` when the arrays do not have the chain's shape.
    public static func verifyForward(
        sessionID: String, stride: Int, chunkHashes: [Digest32], links: [Digest32], jumpLinks: [Digest32]
    ) throws(IntegrityError) -> ChainVerification {
        try checkShape(stride: stride, chunkHashes: chunkHashes, links: links, jumpLinks: jumpLinks)
        let genesis = Self.genesis(sessionID: sessionID)
        var previous = genesis
        var previousJump = genesis
        for index in chunkHashes.indices {
            let expected = link(chunkHash: chunkHashes[index], previous: previous)
            guard expected == links[index] else { return .broken(atChunk: index) }
            if (index + 1) % stride == 0 {
                let jumpIndex = (index + 1) / stride - 1
                let expectedJump = jump(boundaryLink: expected, previous: previousJump)
                guard expectedJump == jumpLinks[jumpIndex] else { return .broken(atChunk: index) }
                previousJump = expectedJump
            }
            previous = expected
        }
        return .intact(count: chunkHashes.count)
    }

    /// Backward verification of a resumed prefix: from the head, re-hashes the links of the last
    /// (open) segment down to the newest jump link, then walks the jump chain down to this
    /// session's genesis, checking that each jump link binds its boundary link.
    ///
    /// O(s + m/s) = O(√n) hashes: a quick check that the stored head and jump links belong to this
    /// session and chain together; chunks before the newest jump link are re-hashed only by
    /// `verifyForward`. Returns `.broken(atChunk:)` naming the newest position found inconsistent.
    public static func verifyBackward(
        sessionID: String, stride: Int, chunkHashes: [Digest32], links: [Digest32], jumpLinks: [Digest32]
    ) throws(IntegrityError) -> ChainVerification {
        try checkShape(stride: stride, chunkHashes: chunkHashes, links: links, jumpLinks: jumpLinks)
        let genesis = Self.genesis(sessionID: sessionID)
        let closed = jumpLinks.count * stride
        var index = chunkHashes.count - 1
        while index >= closed {
            let previous = index == 0 ? genesis : links[index - 1]
            guard link(chunkHash: chunkHashes[index], previous: previous) == links[index] else {
                return .broken(atChunk: index)
            }
            index -= 1
        }
        var k = jumpLinks.count
        while k >= 1 {
            let boundary = k * stride - 1
            let previousJump = k == 1 ? genesis : jumpLinks[k - 2]
            guard jump(boundaryLink: links[boundary], previous: previousJump) == jumpLinks[k - 1] else {
                return .broken(atChunk: boundary)
            }
            k -= 1
        }
        return .intact(count: chunkHashes.count)
    }

    private static func checkShape(
        stride: Int, chunkHashes: [Digest32], links: [Digest32], jumpLinks: [Digest32]
    ) throws(IntegrityError) {
        guard stride >= 1, links.count == chunkHashes.count, jumpLinks.count == chunkHashes.count / stride else {
            throw IntegrityError(
                .malformedProof,
                "a chain prefix needs one link per chunk and count/stride jump links (stride \(stride), "
                    + "\(chunkHashes.count) chunks, \(links.count) links, \(jumpLinks.count) jump links)")
        }
    }
}
