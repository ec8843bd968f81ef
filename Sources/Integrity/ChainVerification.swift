/// The outcome of checking a stored commitment-chain prefix.
public enum ChainVerification: Sendable, Hashable {
    /// Every checked link matched; `count` chunks are committed.
    case intact(count: Int)
    /// The link (or the jump link closing at this chunk) does not match: resume from before `chunk`.
    case broken(atChunk: Int)
}
