/// How an attempt ended once a message 2 authenticated. Every case ends the attempt.
public enum HandshakeOutcome: Sendable {
    /// The host opened the session; the channel seals Confirm records next.
    case accepted(Accept, SessionChannel)
    /// The host refused (Stale, TooNew, PairAgain, SessionBusy or Tombstone); no session.
    case refused(Message2Payload)
    /// The payload authenticated but does not parse (or a tombstone names another key); no session.
    case unparseable
}
