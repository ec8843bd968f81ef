/// What the answer to a Byzantine spot check (or its absence) meant.
public enum ByzantineOutcome: Sendable, Hashable {
    /// Why a server earned a strike.
    public enum StrikeReason: Sendable, Hashable {
        /// An answer was not the HMAC of the range's bytes, or the server said it does not hold a sampled chunk it
        /// acknowledged, or its answer was refused (an old format, a wrong hash or proof).
        case wrongResponse
        /// No answer within 500 ms of the challenge.
        case timeout
        /// An answer to a challenge that is not open (never issued, already judged or withdrawn).
        case unexpectedResponse
    }

    /// The server proved it holds the ranges of these chunks (every item of the challenge).
    case verified(chunks: [Int])
    /// The server failed a challenge (one strike per challenge); `chunks` are the ones it failed (for a timeout:
    /// every chunk of the challenge, which wait to be checked again), `strikes` its total so far (below three).
    case strike(chunks: [Int], reason: StrikeReason, strikes: Int)
    /// The server reached three strikes: stop trusting it (fail the session or switch servers).
    case untrusted
}
