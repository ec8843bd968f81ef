public import AetherIO

/// Checks a file's chunks one at a time, in order, against a manifest: what `aether verify` runs
/// while it reads the file, so it can stop at the first bad chunk.
public struct ManifestVerifier: Sendable {
    /// The outcome of one chunk.
    public enum ChunkCheck: Sendable, Hashable {
        /// The chunk matched its entry.
        case verified(VerifiedChunk)
        /// The chunk at `index` failed.
        case mismatch(index: Int, reason: ManifestVerificationResult.ChunkMismatch)
    }

    /// The manifest being checked against.
    public let manifest: VerifiedManifest
    /// Chunks checked so far.
    public private(set) var checkedCount = 0
    private var failed = false

    init(manifest: VerifiedManifest) { self.manifest = manifest }

    /// Checks the next chunk (constant-time digest comparison). After a mismatch every later call
    /// reports the same failure: a verification that failed never turns back into a success.
    public mutating func check(_ actual: ManifestChunk) -> ChunkCheck {
        let index = checkedCount
        guard !failed else { return .mismatch(index: index, reason: .unexpected) }
        guard index < manifest.chunks.count else {
            failed = true
            return .mismatch(index: index, reason: .unexpected)
        }
        let expected = manifest.chunks[index]
        let reason: ManifestVerificationResult.ChunkMismatch?
        if actual.length != expected.length {
            reason = .length(expected: expected.length, actual: actual.length)
        } else if actual.sha256 != expected.sha256 {
            reason = .sha256
        } else if actual.crc32c != expected.crc32c {
            reason = .crc32c
        } else {
            reason = nil
        }
        if let reason {
            failed = true
            return .mismatch(index: index, reason: reason)
        }
        checkedCount += 1
        return .verified(VerifiedChunk(index: index, digest: expected))
    }

    /// Ends the check: `.badChunk(index:reason: .missing)` when chunks are missing, then the
    /// whole-file SHA-256 when given.
    public func finish(fileSHA256 actual: Digest32? = nil) -> ManifestVerificationResult {
        guard !failed else { return .badChunk(index: checkedCount, reason: .unexpected) }
        guard checkedCount == manifest.chunks.count else { return .badChunk(index: checkedCount, reason: .missing) }
        if let actual, actual != manifest.fileSHA256 { return .fileDigestMismatch }
        return .intact
    }
}
