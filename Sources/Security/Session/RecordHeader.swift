/// The 20-byte header of a sealed record, all of it the AEAD's associated data:
/// type `0x03`, version `0x03`, direction, inner type, session id (u64), counter (u64, below 2^32).
public struct RecordHeader: Sendable, Hashable {
    /// Which way the record travels.
    public let direction: RecordDirection
    /// Application type (below 0x40) or control type.
    public let innerType: UInt8
    /// The session (non-zero).
    public let sessionID: UInt64
    /// The record counter, below 2^32.
    public let counter: UInt64

    /// A header; a zero session id or a counter of 2^32 or more is rejected.
    public init(direction: RecordDirection, innerType: UInt8, sessionID: UInt64, counter: UInt64)
        throws(SecurityError)
    {
        guard sessionID != 0 else { throw SecurityError(.malformedMessage, "record header: session id is zero") }
        guard counter < SessionWire.counterLimit else {
            throw SecurityError(.limitExceeded, "record header: counter is 2^32 or more")
        }
        self.direction = direction
        self.innerType = innerType
        self.sessionID = sessionID
        self.counter = counter
    }

    /// How the inner type is treated.
    public var innerTypeClass: InnerTypeClass { InnerTypeClass(innerType) }

    /// Parses exactly 20 bytes.
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> RecordHeader {
        guard bytes.count == SessionWire.recordHeaderSize else {
            throw SecurityError(.malformedMessage, "record header: length \(bytes.count), want 20")
        }
        return try unsafe TypedBytes.with(bytes) { (raw) throws(SecurityError) in try unsafe parse(prefixOf: raw) }
    }

    /// Parses the first 20 bytes of `raw` (a whole record), without allocating.
    static func parse(prefixOf raw: UnsafeRawBufferPointer) throws(SecurityError) -> RecordHeader {
        guard raw.count >= SessionWire.recordHeaderSize else {
            throw SecurityError(.malformedMessage, "record header: truncated")
        }
        guard unsafe raw[0] == SessionWire.recordType else {
            throw SecurityError(.malformedMessage, "record header: not a record")
        }
        guard unsafe raw[1] == SessionWire.version else {
            throw SecurityError(.malformedMessage, "record header: unknown version")
        }
        guard let direction = unsafe RecordDirection(rawValue: raw[2]) else {
            throw SecurityError(.malformedMessage, "record header: unknown direction")
        }
        var sessionID: UInt64 = 0
        var counter: UInt64 = 0
        for index in 0..<8 {
            sessionID = sessionID << 8 | UInt64(unsafe raw[4 + index])
            counter = counter << 8 | UInt64(unsafe raw[12 + index])
        }
        guard sessionID != 0 else { throw SecurityError(.malformedMessage, "record header: session id is zero") }
        guard counter < SessionWire.counterLimit else {
            throw SecurityError(.malformedMessage, "record header: counter is 2^32 or more")
        }
        return try RecordHeader(direction: direction, innerType: unsafe raw[3], sessionID: sessionID, counter: counter)
    }

    /// Writes the 20 bytes into the start of `out` (which has room for them).
    func write(into out: UnsafeMutableRawBufferPointer) {
        unsafe out[0] = SessionWire.recordType
        unsafe out[1] = SessionWire.version
        unsafe out[2] = direction.rawValue
        unsafe out[3] = innerType
        for index in 0..<8 {
            let shift = UInt64(56 - 8 * index)
            unsafe out[4 + index] = UInt8(truncatingIfNeeded: sessionID >> shift)
            unsafe out[12 + index] = UInt8(truncatingIfNeeded: counter >> shift)
        }
    }

    /// The 20-byte encoding.
    public func encoded() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: SessionWire.recordHeaderSize)
        unsafe out.withUnsafeMutableBytes { unsafe write(into: $0) }
        return out
    }
}
