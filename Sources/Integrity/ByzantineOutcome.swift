/// What a Byzantine challenge response (or its absence) meant.
public enum ByzantineOutcome: Sendable, Hashable {
    /// Why a server earned a strike.
    public enum StrikeReason: Sendable, Hashable {
        /// The answer was not HMAC(nonce, chunk).
        case wrongResponse
        /// No answer within 500 ms of the challenge.
        case timeout
        /// An answer for a chunk that had no open challenge.
        case unexpectedResponse
    }

    /// The server proved it holds the chunk.
    case verified(chunk: Int)
    /// The server failed a challenge; `strikes` is its total so far (below three).
    case strike(chunk: Int, reason: StrikeReason, strikes: Int)
    /// The server reached three strikes: stop trusting it (fail the session or switch servers).
    case untrusted
}
