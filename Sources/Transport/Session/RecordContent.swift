/// The content of a record that opened (AEAD verified, accepted by the replay window).
public enum RecordContent: Sendable, Hashable {
    /// Application data (inner type `0x00 ... 0x3f`).
    case application(type: UInt8, body: [UInt8])
    /// Confirm (`0x40`).
    case confirm
    /// BYE (`0x41`).
    case bye(ByeReason)
    /// Counts query (`0x42`).
    case countsQuery(id: UInt32)
    /// Counts answer (`0x43`).
    case countsAnswer(id: UInt32, counts: SessionCounts)
    /// Slot status (`0x44`).
    case slotStatus([SlotEntry])
    /// Keep-alive (`0x45`).
    case keepAlive
    /// An unknown control type (`0x46 ... 0xff`), or a known one whose body does not parse.
    case unknownControl(type: UInt8)

    /// Whether this record proves the sender committed the session (doc section 3.2, "What counts as live").
    public var provesCommit: Bool {
        if case .unknownControl = self { return false }
        return true
    }
}
