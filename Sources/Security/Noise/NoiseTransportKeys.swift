public import AetherIO

/// What a finished Noise handshake yields: one key per direction (`Split()`) and the handshake hash.
public struct NoiseTransportKeys: Sendable {
    /// Key for initiator → responder messages (Noise's `k1`).
    public let initiatorToResponder: SymmetricKey
    /// Key for responder → initiator messages (Noise's `k2`).
    public let responderToInitiator: SymmetricKey
    /// The final handshake hash `h` (not secret).
    public let handshakeHash: Digest32
}
