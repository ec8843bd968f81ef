/// The hello's intent (secure-session doc section 2.1).
public enum HelloIntent: UInt8, Sendable, Hashable {
    /// Open a session when the client has none under this host.
    case connect = 0x01
    /// Replace the live session named by the previous session id.
    case reconnect = 0x02
    /// First connect under a key the host lists as pending: make it active.
    case promote = 0x03
}
