/// The end of a handshake on the initiator's side: the peer's payload and the transport keys.
public struct NoiseHandshakeResult: Sendable {
    /// The decrypted message 2 payload (not yet parsed).
    public let payload: [UInt8]
    /// The per-direction keys and the handshake hash.
    public let keys: NoiseTransportKeys
}
