/// How a record's inner type is treated: below 0x40 application data, 0x40-0x45 known control, above
/// that unknown control (authenticated, counts for liveness, never delivered, never proof of a commit).
public enum InnerTypeClass: UInt8, Sendable, Hashable {
    /// `0x00 ... 0x3f`: delivered to the application.
    case application = 0x00
    /// `0x40 ... 0x45`: a control message this version knows.
    case control = 0x01
    /// `0x46 ... 0xff`: ignored.
    case unknownControl = 0x02

    /// The first control inner type.
    public static let firstControl: UInt8 = 0x40
    /// The last control inner type this version knows.
    public static let lastKnownControl: UInt8 = 0x45

    /// The class of `innerType`.
    public init(_ innerType: UInt8) {
        if innerType < Self.firstControl {
            self = .application
        } else if innerType <= Self.lastKnownControl {
            self = .control
        } else {
            self = .unknownControl
        }
    }
}
