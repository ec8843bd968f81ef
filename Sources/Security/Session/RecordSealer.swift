/// Seals the records of one direction of a session: header as associated data, nonce from the counter,
/// counters 0, 1, 2 ... and never 2^32.
public struct RecordSealer: Sendable {
    let key: SymmetricKey
    /// The direction this sealer writes.
    public let direction: RecordDirection
    /// The session id written in every header.
    public let sessionID: UInt64
    /// The counter the next record gets.
    public private(set) var nextCounter: UInt64
    /// Largest plaintext sealed (65,471 at most; a client uses the Accept's max record plaintext).
    public let maxPlaintext: Int

    /// A sealer starting at counter 0. The key is the direction's key from `Split()`.
    public init(
        key: SymmetricKey, direction: RecordDirection, sessionID: UInt64,
        maxPlaintext: Int = SessionWire.maxRecordPlaintext
    ) throws(SecurityError) {
        try self.init(
            key: key, direction: direction, sessionID: sessionID, nextCounter: 0, maxPlaintext: maxPlaintext)
    }

    /// Starts at any counter (tests of the 2^32 limit).
    init(
        key: SymmetricKey, direction: RecordDirection, sessionID: UInt64, nextCounter: UInt64,
        maxPlaintext: Int = SessionWire.maxRecordPlaintext
    ) throws(SecurityError) {
        guard key.bitCount == 256 else { throw SecurityError(.invalidKey, "a record key is 32 bytes") }
        guard sessionID != 0 else { throw SecurityError(.malformedMessage, "session id is zero") }
        self.key = key
        self.direction = direction
        self.sessionID = sessionID
        self.nextCounter = nextCounter
        self.maxPlaintext = min(max(maxPlaintext, 0), SessionWire.maxRecordPlaintext)
    }

    /// The datagram size of a record with `plaintextCount` bytes.
    public static func sealedSize(plaintextCount: Int) -> Int {
        plaintextCount + SessionWire.recordHeaderSize + SessionWire.tagSize
    }

    /// Seals into `output` (at least `sealedSize` bytes) without allocating; returns the bytes written.
    /// Past counter 2^32 − 1 it throws `.limitExceeded` and seals nothing.
    public mutating func seal(
        innerType: UInt8, plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(SecurityError) -> Int {
        guard nextCounter < SessionWire.counterLimit else {
            throw SecurityError(.limitExceeded, "record counter 2^32 reached: reconnect")
        }
        guard plaintext.count <= maxPlaintext else {
            throw SecurityError(.limitExceeded, "record plaintext longer than \(maxPlaintext) bytes")
        }
        let size = Self.sealedSize(plaintextCount: plaintext.count)
        guard output.count >= size else { throw SecurityError(.limitExceeded, "record output buffer too small") }
        let header = try RecordHeader(
            direction: direction, innerType: innerType, sessionID: sessionID, counter: nextCounter)
        unsafe header.write(into: output)
        let aad = unsafe UnsafeRawBufferPointer(rebasing: output[0..<SessionWire.recordHeaderSize])
        let body = unsafe UnsafeMutableRawBufferPointer(rebasing: output[SessionWire.recordHeaderSize..<size])
        let ok = unsafe key.withUnsafeBytes { keyBytes in
            unsafe RecordNonce.with(counter: nextCounter) { nonce in
                unsafe Sodium.chachaSeal(body, plaintext, aad, nonce, keyBytes)
            }
        }
        guard ok else {
            unsafe Sodium.wipe(UnsafeMutableRawBufferPointer(rebasing: output[0..<size]))
            throw SecurityError(.systemCall, "ChaCha20-Poly1305 seal failed")
        }
        nextCounter += 1
        return size
    }

    /// Seals application data (inner type below 0x40) or a raw control type, returning the datagram.
    public mutating func seal(innerType: UInt8, plaintext: [UInt8]) throws(SecurityError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.sealedSize(plaintextCount: plaintext.count))
        let result: Result<Int, SecurityError> = unsafe out.withUnsafeMutableBytes { output in
            unsafe plaintext.withUnsafeBytes { input in
                do throws(SecurityError) {
                    return .success(try unsafe seal(innerType: innerType, plaintext: input, into: output))
                } catch {
                    return .failure(error)
                }
            }
        }
        _ = try result.get()
        return out
    }

    /// Seals a control message.
    public mutating func seal(_ control: ControlMessage) throws(SecurityError) -> [UInt8] {
        try seal(innerType: control.innerType, plaintext: control.encodedBody())
    }
}
