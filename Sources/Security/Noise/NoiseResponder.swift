/// The responder of `Noise_NNpsk0_25519_ChaChaPoly_SHA256` (Noise revision 34): a value-type state machine.
///
/// A message 1 that fails to authenticate changes nothing.
public struct NoiseResponder: Sendable {
    private enum Phase: Sendable {
        case start(NoiseSymmetricState)
        case readyToWrite(NoiseSymmetricState, X25519.PublicKey)
        case finished
    }

    private var phase: Phase
    private let psk: SymmetricKey
    private let ephemeral: X25519.PrivateKey

    /// Prepares to answer a message 1 under `psk` (32 bytes) with a fresh random ephemeral key.
    public init(psk: SymmetricKey, prologue: [UInt8]) throws(SecurityError) {
        try self.init(psk: psk, prologue: prologue, ephemeral: try X25519.PrivateKey())
    }

    /// Fixed-ephemeral form, for test vectors and golden files only (internal: no production path).
    init(psk: SymmetricKey, prologue: [UInt8], ephemeral: X25519.PrivateKey) throws(SecurityError) {
        guard psk.bitCount == 256 else { throw SecurityError(.invalidKey, "the Noise PSK is 32 bytes") }
        self.psk = psk
        self.ephemeral = ephemeral
        phase = .start(NoiseSymmetricState(protocolName: NoiseProtocol.nameBytes, prologue: prologue))
    }

    /// Reads message 1 and returns its payload. On failure nothing changes.
    public mutating func readMessage1(_ message: [UInt8]) throws(SecurityError) -> [UInt8] {
        guard case .start(let saved) = phase else { throw SecurityError(.malformedMessage, "message 1 already read") }
        guard message.count >= 48, message.count <= NoiseProtocol.maxMessageLength else {
            throw SecurityError(.malformedMessage, "Noise message 1 has a wrong length")
        }
        var state = saved
        try unsafe psk.withUnsafeBytes { (raw) throws(SecurityError) in try unsafe state.mixKeyAndHash(raw) }
        let peer = try X25519.PublicKey(rawRepresentation: message[0..<32])
        state.mixHash(peer.rawRepresentation)
        try unsafe TypedBytes.with(peer.rawRepresentation) { (raw) throws(SecurityError) in
            try unsafe state.mixKey(raw)
        }
        let payload = try state.decryptAndHash(Array(message[32...]))
        phase = .readyToWrite(state, peer)
        return payload
    }

    /// Writes message 2 (`e, ee` then the encrypted payload) and finishes the handshake.
    public mutating func writeMessage2(payload: [UInt8]) throws(SecurityError) -> (
        message: [UInt8], keys: NoiseTransportKeys
    ) {
        guard case .readyToWrite(var state, let peer) = phase else {
            throw SecurityError(.malformedMessage, "message 1 has not been read")
        }
        guard payload.count <= NoiseProtocol.maxMessageLength - 48 else {
            throw SecurityError(.limitExceeded, "Noise message 2 payload too long")
        }
        let publicKey = ephemeral.publicKey.rawRepresentation
        state.mixHash(publicKey)
        try unsafe TypedBytes.with(publicKey) { (raw) throws(SecurityError) in try unsafe state.mixKey(raw) }
        let shared = try ephemeral.sharedSecret(with: peer)
        try unsafe shared.withUnsafeBytes { (raw) throws(SecurityError) in try unsafe state.mixKey(raw) }
        let sealed = try state.encryptAndHash(payload)
        let keys = try state.split()
        phase = .finished
        return (publicKey + sealed, keys)
    }
}
