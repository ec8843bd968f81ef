import AetherIntegrity

/// What the Byzantine spot checks of one upload did (`docs/UPLOADER.md`): made or not (and why not), how many
/// sampled chunks the receiver proved it holds, its strikes and the bytes checked. Only a report made from a
/// `ByzantineVerifier` in which every sampled chunk's MAC over the client's bytes was right can say `passed`, so
/// `byzantine-sample` is never listed for a receiver that answered from hashes or not at all.
public struct SpotCheckReport: Sendable, Hashable {
    /// The spot-check version used, nil when no check was made.
    public let version: Int?
    /// Chunks sampled (the spec's `max(ceil(log2 n), ceil(sqrt(n / 10)))`).
    public let sampled: Int
    /// Sampled chunks whose ranges the receiver proved it holds.
    public let verified: Int
    /// The receiver's strikes (late answers; a wrong one fails the upload).
    public let strikes: Int
    /// The bytes the checked ranges add up to (each read by the client from its file and by the receiver from its
    /// store).
    public let bytesChecked: Int64
    /// Why no check was made, when none was.
    public let notMade: String?
    /// True when every sampled chunk was verified by a trusted receiver.
    public let passed: Bool

    /// The report of checks that were made, read from `verifier`.
    init(verifier: ByzantineVerifier, bytesChecked: Int64) {
        version = ByzantineChallenge.version
        sampled = verifier.sampledChunks.count
        verified = verifier.verifiedCount
        strikes = verifier.strikes
        self.bytesChecked = bytesChecked
        notMade = nil
        passed = verifier.passed
    }

    /// No check was made, for `reason`.
    init(notMade reason: String) {
        version = nil
        sampled = 0
        verified = 0
        strikes = 0
        bytesChecked = 0
        notMade = reason
        passed = false
    }
}
