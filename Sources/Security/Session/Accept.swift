/// Message 2 payload `0x01`: the host opened the session. Carries the session id, the host's time, the
/// session limits, the slot status and the host's name (33 ... 369 bytes).
public struct Accept: Sendable, Hashable {
    /// Payload kind byte.
    public static let kind: UInt8 = 0x01

    /// Names the session in every record header; non-zero.
    public let sessionID: UInt64
    /// Host time, ms since the Unix epoch; non-zero.
    public let hostTime: UInt64
    /// With no authenticated record for this long (ms), the session closes.
    public let livenessTimeoutMilliseconds: UInt32
    /// The client reconnects before the session is this old (s).
    public let maxSessionAgeSeconds: UInt32
    /// The client reconnects before either direction's next counter would pass this.
    public let maxCounter: UInt32
    /// Largest record plaintext the host accepts.
    public let maxRecordPlaintext: UInt16
    /// The host's view of this device's keys.
    public let slots: SlotStatus
    /// The host's display name (at most 64 UTF-8 bytes, no control characters).
    public let hostName: String

    /// Validates every range. A host name longer than 64 bytes is truncated at a scalar boundary;
    /// one with a control character is `.malformedMessage`.
    public init(
        sessionID: UInt64, hostTime: UInt64, livenessTimeoutMilliseconds: UInt32, maxSessionAgeSeconds: UInt32,
        maxCounter: UInt32, maxRecordPlaintext: UInt16, slots: SlotStatus, hostName: String
    ) throws(SecurityError) {
        let name = Self.truncatedName(hostName)
        try Self.validate(
            sessionID: sessionID, hostTime: hostTime, liveness: livenessTimeoutMilliseconds,
            age: maxSessionAgeSeconds, maxCounter: maxCounter, maxPlaintext: maxRecordPlaintext,
            name: Array(name.utf8))
        self.sessionID = sessionID
        self.hostTime = hostTime
        self.livenessTimeoutMilliseconds = livenessTimeoutMilliseconds
        self.maxSessionAgeSeconds = maxSessionAgeSeconds
        self.maxCounter = maxCounter
        self.maxRecordPlaintext = maxRecordPlaintext
        self.slots = slots
        self.hostName = name
    }

    /// The longest prefix of whole Unicode scalars of `name` that fits in 64 UTF-8 bytes.
    public static func truncatedName(_ name: String) -> String {
        var result = String.UnicodeScalarView()
        var size = 0
        for scalar in name.unicodeScalars {
            let width = String(scalar).utf8.count
            guard size + width <= SessionWire.maxHostNameBytes else { break }
            size += width
            result.append(scalar)
        }
        return String(result)
    }

    private static func validate(
        sessionID: UInt64, hostTime: UInt64, liveness: UInt32, age: UInt32, maxCounter: UInt32,
        maxPlaintext: UInt16, name: [UInt8]
    ) throws(SecurityError) {
        func fail(_ what: String) -> SecurityError { SecurityError(.malformedMessage, "accept: \(what)") }
        guard sessionID != 0 else { throw fail("session id is zero") }
        guard hostTime != 0 else { throw fail("host time is zero") }
        guard SessionWire.livenessTimeoutRange.contains(liveness) else { throw fail("liveness timeout out of range") }
        guard SessionWire.maxSessionAgeRange.contains(age) else { throw fail("max session age out of range") }
        guard SessionWire.maxCounterRange.contains(maxCounter) else { throw fail("max counter out of range") }
        guard SessionWire.maxRecordPlaintextRange.contains(maxPlaintext) else {
            throw fail("max record plaintext out of range")
        }
        guard name.count <= SessionWire.maxHostNameBytes else { throw fail("host name longer than 64 bytes") }
        guard !name.contains(where: { $0 < 0x20 || $0 == 0x7f }) else { throw fail("control character in host name") }
    }

    /// Parses a whole Accept payload (kind byte included).
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> Accept {
        var reader = WireReader(bytes, structure: "accept")
        guard try reader.u8("kind") == kind else { throw reader.failure("not an accept") }
        let sessionID = try reader.u64("session id")
        let hostTime = try reader.u64("host time")
        let liveness = try reader.u32("liveness timeout")
        let age = try reader.u32("max session age")
        let maxCounter = try reader.u32("max counter")
        let maxPlaintext = try reader.u16("max record plaintext")
        let slots = try SlotStatus.read(&reader)
        let nameLength = Int(try reader.u8("name length"))
        guard nameLength <= SessionWire.maxHostNameBytes else { throw reader.failure("host name longer than 64 bytes") }
        let nameBytes = Array(try reader.take(nameLength, "host name"))
        try reader.finish()
        try validate(
            sessionID: sessionID, hostTime: hostTime, liveness: liveness, age: age, maxCounter: maxCounter,
            maxPlaintext: maxPlaintext, name: nameBytes)
        guard let name = String(validating: nameBytes, as: UTF8.self) else {
            throw reader.failure("host name is not UTF-8")
        }
        return try Accept(
            sessionID: sessionID, hostTime: hostTime, livenessTimeoutMilliseconds: liveness,
            maxSessionAgeSeconds: age, maxCounter: maxCounter, maxRecordPlaintext: maxPlaintext, slots: slots,
            hostName: name)
    }

    /// The encoding; `parse(encoded())` returns `self`.
    public func encoded() -> [UInt8] {
        let name = Array(hostName.utf8)
        var out: [UInt8] = [Self.kind]
        out.reserveCapacity(33 + 17 * slots.entries.count + name.count)
        out.appendBigEndian(sessionID)
        out.appendBigEndian(hostTime)
        out.appendBigEndian(livenessTimeoutMilliseconds)
        out.appendBigEndian(maxSessionAgeSeconds)
        out.appendBigEndian(maxCounter)
        out.appendBigEndian(maxRecordPlaintext)
        out += slots.encoded()
        out.append(UInt8(name.count))
        out += name
        return out
    }
}
