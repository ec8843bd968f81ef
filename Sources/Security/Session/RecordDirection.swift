/// Which way a record travels (header byte 2); each direction has its own key and counter.
public enum RecordDirection: UInt8, Sendable, Hashable, CaseIterable {
    /// Client (Noise initiator) to host, sealed with `k1`.
    case clientToHost = 0x00
    /// Host (Noise responder) to client, sealed with `k2`.
    case hostToClient = 0x01
}
