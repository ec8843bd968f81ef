/// The host's side of one handshake: reads message 1 under the K_dev its clear key id names, then
/// answers with an Accept (which yields the host's channel) or a refusal.
public struct SessionResponder: Sendable {
    /// The attempt answered.
    public let attemptID: UInt64
    /// The authenticated hello.
    public let hello: Hello
    private var noise: NoiseResponder

    /// Reads `message1` under `psk` (the key of `message1.keyID`). Throws `.authenticationFailed` when
    /// it does not decrypt and `.malformedMessage` when the hello does not parse or names another key.
    public init(message1: Message1, psk: SymmetricKey) throws(SecurityError) {
        try self.init(message1: message1, noise: NoiseResponder(psk: psk, prologue: message1.prologue))
    }

    /// Fixed ephemeral: golden files and tests only.
    init(message1: Message1, psk: SymmetricKey, ephemeral: X25519.PrivateKey) throws(SecurityError) {
        try self.init(
            message1: message1, noise: NoiseResponder(psk: psk, prologue: message1.prologue, ephemeral: ephemeral))
    }

    private init(message1: Message1, noise: NoiseResponder) throws(SecurityError) {
        var noise = noise
        let hello = try Hello.parse(try noise.readMessage1(message1.noiseMessage))
        guard hello.keyID == message1.keyID else {
            throw SecurityError(.malformedMessage, "hello: key id differs from message 1")
        }
        self.attemptID = message1.attemptID
        self.hello = hello
        self.noise = noise
    }

    /// Writes message 2 carrying `payload`. For an Accept it also returns the host's channel, whose
    /// opener enforces the Accept's max record plaintext.
    public mutating func answer(_ payload: Message2Payload) throws(SecurityError) -> (
        message2: [UInt8], channel: SessionChannel?
    ) {
        try answer(rawPayload: payload.encoded(), accept: { if case .accept(let a) = payload { a } else { nil } }())
    }

    /// Writes message 2 with any payload bytes (golden files of unparseable payloads).
    mutating func answer(rawPayload: [UInt8], accept: Accept?) throws(SecurityError) -> (
        message2: [UInt8], channel: SessionChannel?
    ) {
        guard rawPayload.count <= SessionWire.message2MaxPayload else {
            throw SecurityError(.limitExceeded, "message 2 payload longer than 369 bytes")
        }
        let (noiseMessage, keys) = try noise.writeMessage2(payload: rawPayload)
        let datagram = Message2(attemptID: attemptID, noiseMessage: noiseMessage).encoded()
        guard let accept else { return (datagram, nil) }
        let channel = try SessionChannel(
            keys: keys, sessionID: accept.sessionID, isClient: false, maxPlaintext: Int(accept.maxRecordPlaintext))
        return (datagram, channel)
    }
}
