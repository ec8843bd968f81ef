/// The host's view of this device's keys (in Accept and in control record 0x44): at most 16 entries,
/// strictly ascending by key id, each active or pending. Encoding: count, then 17 bytes per entry.
public struct SlotStatus: Sendable, Hashable {
    /// A key's state on the host.
    public enum State: UInt8, Sendable, Hashable, CaseIterable {
        /// The key opens sessions.
        case active = 0x01
        /// The key was paired but has not connected yet; the client connects with it at once.
        case pending = 0x02
    }

    /// One listed key.
    public struct Entry: Sendable, Hashable {
        /// The key.
        public let keyID: KeyID
        /// Its state.
        public let state: State

        /// An entry.
        public init(keyID: KeyID, state: State) {
            self.keyID = keyID
            self.state = state
        }
    }

    /// The entries, ascending by key id.
    public let entries: [Entry]

    /// Sorts the entries; more than 16 or a repeated key id is `.malformedMessage`.
    public init(entries: [Entry]) throws(SecurityError) {
        let sorted = entries.sorted { $0.keyID < $1.keyID }
        guard sorted.count <= SessionWire.maxSlots else {
            throw SecurityError(.malformedMessage, "slot status: more than \(SessionWire.maxSlots) slots")
        }
        for index in sorted.indices.dropFirst() where sorted[index - 1].keyID == sorted[index].keyID {
            throw SecurityError(.malformedMessage, "slot status: a key id is listed twice")
        }
        self.entries = sorted
    }

    /// Parses exactly one slot status.
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> SlotStatus {
        var reader = WireReader(bytes, structure: "slot status")
        let status = try read(&reader)
        try reader.finish()
        return status
    }

    static func read(_ reader: inout WireReader) throws(SecurityError) -> SlotStatus {
        let count = Int(try reader.u8("slot count"))
        guard count <= SessionWire.maxSlots else { throw reader.failure("more than 16 slots") }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let keyID = try reader.keyID("slot key id")
            guard let state = State(rawValue: try reader.u8("slot state")) else {
                throw reader.failure("unknown slot state")
            }
            if let previous = entries.last, !(previous.keyID < keyID) {
                throw reader.failure("slots not strictly ascending")
            }
            entries.append(Entry(keyID: keyID, state: state))
        }
        return try SlotStatus(entries: entries)
    }

    /// The encoding (1 + 17 per entry bytes).
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [UInt8(entries.count)]
        out.reserveCapacity(1 + 17 * entries.count)
        for entry in entries {
            out += entry.keyID.bytes
            out.append(entry.state.rawValue)
        }
        return out
    }
}
