import AetherIO

/// The client's side of one handshake attempt: builds message 1 once (resent unchanged) and reads
/// message 2. A message 2 that fails framing or authentication changes nothing; the first that
/// authenticates ends the attempt, even if its payload then fails to parse.
public struct SessionInitiator: Sendable {
    /// The attempt id (message 1 bytes 2 ..< 10).
    public let attemptID: UInt64
    /// The hello sent.
    public let hello: Hello
    /// The message 1 datagram; resend these exact bytes.
    public let message1: [UInt8]
    private var noise: NoiseInitiator

    /// Starts an attempt under K_dev `psk` named by `hello.keyID`, with a fresh ephemeral and attempt id.
    public init(hello: Hello, psk: SymmetricKey) throws(SecurityError) {
        var attemptID: UInt64 = 0
        var random = SecureRandom()
        while attemptID == 0 { attemptID = random.next() }
        let prologue = Message1.prologue(attemptID: attemptID, keyID: hello.keyID)
        try self.init(hello: hello, attemptID: attemptID, noise: NoiseInitiator(psk: psk, prologue: prologue))
    }

    /// Fixed attempt id and ephemeral: golden files and tests only.
    init(hello: Hello, psk: SymmetricKey, attemptID: UInt64, ephemeral: X25519.PrivateKey) throws(SecurityError) {
        let prologue = Message1.prologue(attemptID: attemptID, keyID: hello.keyID)
        try self.init(
            hello: hello, attemptID: attemptID,
            noise: NoiseInitiator(psk: psk, prologue: prologue, ephemeral: ephemeral))
    }

    private init(hello: Hello, attemptID: UInt64, noise: NoiseInitiator) throws(SecurityError) {
        guard attemptID != 0 else { throw SecurityError(.malformedMessage, "attempt id is zero") }
        var noise = noise
        let sealed = try noise.writeMessage1(payload: hello.encoded())
        self.attemptID = attemptID
        self.hello = hello
        self.noise = noise
        message1 = Message1.header(attemptID: attemptID, keyID: hello.keyID) + sealed
    }

    /// Whether a message 2 authenticated (the attempt is over).
    public var isFinished: Bool { noise.isFinished }

    /// Reads a message 2 datagram. Throws (and changes nothing) when framing or authentication fails,
    /// or when the attempt is already over; otherwise ends the attempt with its outcome.
    public mutating func receive(message2 datagram: [UInt8]) throws(SecurityError) -> HandshakeOutcome {
        let message = try Message2.parse(datagram)
        guard message.attemptID == attemptID else { throw SecurityError(.malformedMessage, "message 2: other attempt") }
        let result = try noise.readMessage2(message.noiseMessage)
        let payload: Message2Payload
        do {
            payload = try Message2Payload.parse(result.payload)
        } catch {
            return .unparseable
        }
        switch payload {
        case .accept(let accept):
            let channel = try SessionChannel(
                keys: result.keys, sessionID: accept.sessionID, isClient: true,
                maxPlaintext: Int(accept.maxRecordPlaintext))
            return .accepted(accept, channel)
        case .tombstone(let tombstone) where tombstone.keyID != hello.keyID:
            return .unparseable
        default:
            return .refused(payload)
        }
    }
}
