/// What a client wants from a handshake (hello byte 1).
public enum HelloIntent: UInt8, Sendable, Hashable, CaseIterable {
    /// Open a session when none is live under this host; previous session id is 0.
    case connect = 0x01
    /// Replace the live session named by the previous session id (non-zero).
    case reconnect = 0x02
    /// First connect under a key the host lists as pending: make it active.
    case promote = 0x03
}
