/// One side's record state after an Accept: a sealer for the direction it sends and an opener for the
/// one it receives, both bound to the session id.
public struct SessionChannel: Sendable {
    /// The session.
    public let sessionID: UInt64
    /// Seals what this side sends.
    public var sealer: RecordSealer
    /// Opens what this side receives.
    public var opener: RecordOpener

    /// The client's channel (sends with `k1`, receives with `k2`) or the host's (the reverse). Records
    /// toward the host are limited to the Accept's max record plaintext on both sides.
    init(keys: NoiseTransportKeys, sessionID: UInt64, isClient: Bool, maxPlaintext: Int) throws(SecurityError) {
        self.sessionID = sessionID
        if isClient {
            sealer = try RecordSealer(
                key: keys.initiatorToResponder, direction: .clientToHost, sessionID: sessionID,
                maxPlaintext: maxPlaintext)
            opener = try RecordOpener(key: keys.responderToInitiator, direction: .hostToClient, sessionID: sessionID)
        } else {
            sealer = try RecordSealer(key: keys.responderToInitiator, direction: .hostToClient, sessionID: sessionID)
            opener = try RecordOpener(
                key: keys.initiatorToResponder, direction: .clientToHost, sessionID: sessionID,
                maxPlaintext: maxPlaintext)
        }
    }
}
