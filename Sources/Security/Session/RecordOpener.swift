/// Opens the records of one receiving direction of a session: checks the header, pre-checks the replay
/// window, verifies the AEAD with the header as associated data, and only then marks the window.
/// A record that fails any step changes nothing.
public struct RecordOpener: Sendable {
    let key: SymmetricKey
    /// The direction this opener receives.
    public let direction: RecordDirection
    /// The session id every header must carry.
    public let sessionID: UInt64
    /// Largest plaintext accepted (65,471 at most; the host may lower it with Accept).
    public let maxPlaintext: Int
    /// The replay window.
    public private(set) var window = ReplayWindow()

    /// An opener. The key is the direction's key from `Split()`.
    public init(
        key: SymmetricKey, direction: RecordDirection, sessionID: UInt64,
        maxPlaintext: Int = SessionWire.maxRecordPlaintext
    ) throws(SecurityError) {
        guard key.bitCount == 256 else { throw SecurityError(.invalidKey, "a record key is 32 bytes") }
        guard sessionID != 0 else { throw SecurityError(.malformedMessage, "session id is zero") }
        self.key = key
        self.direction = direction
        self.sessionID = sessionID
        self.maxPlaintext = min(max(maxPlaintext, 0), SessionWire.maxRecordPlaintext)
    }

    /// Opens `datagram` into `output` (at least `datagram.count - 36` bytes) without allocating.
    /// Throws `.malformedMessage` (framing, direction, session), `.replayDetected` (window) or
    /// `.authenticationFailed` (AEAD); on any failure the window is unchanged and `output` is zeroed.
    public mutating func open(
        _ datagram: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(SecurityError) -> OpenedRecord {
        let overhead = SessionWire.recordHeaderSize + SessionWire.tagSize
        guard datagram.count >= overhead, datagram.count - overhead <= maxPlaintext else {
            throw SecurityError(.malformedMessage, "record: wrong length")
        }
        let header = try unsafe RecordHeader.parse(prefixOf: datagram)
        guard header.direction == direction else { throw SecurityError(.malformedMessage, "record: wrong direction") }
        guard header.sessionID == sessionID else { throw SecurityError(.malformedMessage, "record: other session") }
        guard window.wouldAccept(header.counter) else { throw SecurityError(.replayDetected, "record: replayed") }
        let count = datagram.count - overhead
        guard output.count >= count else { throw SecurityError(.limitExceeded, "record output buffer too small") }
        let plaintext = unsafe UnsafeMutableRawBufferPointer(rebasing: output[0..<count])
        let aad = unsafe UnsafeRawBufferPointer(rebasing: datagram[0..<SessionWire.recordHeaderSize])
        let sealed = unsafe UnsafeRawBufferPointer(rebasing: datagram[SessionWire.recordHeaderSize...])
        let ok = unsafe key.withUnsafeBytes { keyBytes in
            unsafe RecordNonce.with(counter: header.counter) { nonce in
                unsafe Sodium.chachaOpen(plaintext, sealed, aad, nonce, keyBytes)
            }
        }
        guard ok else {
            unsafe Sodium.wipe(plaintext)
            throw SecurityError.authenticationFailedError()
        }
        window.mark(header.counter)
        return OpenedRecord(header: header, plaintextCount: count)
    }

    /// Opens a datagram and classifies it by the inner-type rule.
    public mutating func open(_ datagram: [UInt8]) throws(SecurityError) -> RecordContent {
        let count = max(datagram.count - SessionWire.recordHeaderSize - SessionWire.tagSize, 0)
        var plaintext = [UInt8](repeating: 0, count: count)
        let result: Result<OpenedRecord, SecurityError> = unsafe plaintext.withUnsafeMutableBytes { output in
            unsafe datagram.withUnsafeBytes { input in
                do throws(SecurityError) {
                    return .success(try unsafe open(input, into: output))
                } catch {
                    return .failure(error)
                }
            }
        }
        let opened = try result.get()
        return RecordContent(innerType: opened.header.innerType, plaintext: plaintext)
    }
}
