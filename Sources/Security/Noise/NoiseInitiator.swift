/// The initiator of `Noise_NNpsk0_25519_ChaChaPoly_SHA256` (Noise revision 34): a value-type state machine.
///
/// `-> psk, e` then `<- e, ee`. A message 2 that fails to authenticate changes nothing, so the same
/// initiator still accepts a valid message 2 afterwards; the first one that authenticates finishes it.
public struct NoiseInitiator: Sendable {
    private enum Phase: Sendable {
        case start(NoiseSymmetricState)
        case awaitingMessage2(NoiseSymmetricState)
        case finished
    }

    private var phase: Phase
    private let psk: SymmetricKey
    private let ephemeral: X25519.PrivateKey

    /// Starts a handshake under `psk` (32 bytes) with a fresh random ephemeral key.
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

    /// Whether a message 2 has authenticated (the handshake is over).
    public var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// Writes message 1 (`e` then the encrypted payload). Only once.
    public mutating func writeMessage1(payload: [UInt8]) throws(SecurityError) -> [UInt8] {
        guard case .start(var state) = phase else {
            throw SecurityError(.malformedMessage, "message 1 was already written")
        }
        guard payload.count <= NoiseProtocol.maxMessageLength - 48 else {
            throw SecurityError(.limitExceeded, "Noise message 1 payload too long")
        }
        try unsafe psk.withUnsafeBytes { (raw) throws(SecurityError) in try unsafe state.mixKeyAndHash(raw) }
        let publicKey = ephemeral.publicKey.rawRepresentation
        state.mixHash(publicKey)
        try unsafe TypedBytes.with(publicKey) { (raw) throws(SecurityError) in try unsafe state.mixKey(raw) }
        let sealed = try state.encryptAndHash(payload)
        phase = .awaitingMessage2(state)
        return publicKey + sealed
    }

    /// Reads message 2. On success returns its payload and the transport keys and finishes the
    /// handshake; on any failure (`.authenticationFailed`, `.malformedMessage`) nothing changes.
    public mutating func readMessage2(_ message: [UInt8]) throws(SecurityError) -> NoiseHandshakeResult {
        guard case .awaitingMessage2(let saved) = phase else {
            throw SecurityError(.malformedMessage, "not waiting for message 2")
        }
        guard message.count >= 48, message.count <= NoiseProtocol.maxMessageLength else {
            throw SecurityError(.malformedMessage, "Noise message 2 has a wrong length")
        }
        var state = saved
        let peer = try X25519.PublicKey(rawRepresentation: message[0..<32])
        state.mixHash(peer.rawRepresentation)
        try unsafe TypedBytes.with(peer.rawRepresentation) { (raw) throws(SecurityError) in
            try unsafe state.mixKey(raw)
        }
        let shared = try ephemeral.sharedSecret(with: peer)
        try unsafe shared.withUnsafeBytes { (raw) throws(SecurityError) in try unsafe state.mixKey(raw) }
        let payload = try state.decryptAndHash(Array(message[32...]))
        let keys = try state.split()
        phase = .finished
        return NoiseHandshakeResult(payload: payload, keys: keys)
    }
}
