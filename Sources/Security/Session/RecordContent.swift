/// What an opened record holds, after the inner-type rule: only types below 0x40 are delivered as data.
public enum RecordContent: Sendable, Hashable {
    /// Application data (inner type below 0x40): deliver it.
    case application(type: UInt8, bytes: [UInt8])
    /// A known control message.
    case control(ControlMessage)
    /// An authenticated record of an unknown control type (0x46 and above): nothing is delivered.
    case unknownControl(type: UInt8)
    /// An authenticated record of a known control type whose body does not parse: nothing is delivered.
    case malformedControl(type: UInt8)

    /// Every opened record counts for liveness (it authenticated and passed the window).
    public var countsForLiveness: Bool { true }

    /// Whether the record proves that the peer committed the session: application data and known
    /// control messages do; unknown or malformed control records never do.
    public var provesCommit: Bool {
        switch self {
        case .application, .control: true
        case .unknownControl, .malformedControl: false
        }
    }

    /// Classifies an opened record's plaintext by its inner type.
    public init(innerType: UInt8, plaintext: [UInt8]) {
        switch InnerTypeClass(innerType) {
        case .application: self = .application(type: innerType, bytes: plaintext)
        case .unknownControl: self = .unknownControl(type: innerType)
        case .control:
            do {
                self = .control(try ControlMessage.parse(innerType: innerType, body: plaintext))
            } catch {
                self = .malformedControl(type: innerType)
            }
        }
    }
}
