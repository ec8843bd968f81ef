/// What one rtnetlink datagram held: the events of every message that parsed, and an error for each message that
/// did not. A damaged message costs only its own event; a header whose length overruns the datagram ends the walk
/// (the next message cannot be found), and is reported too.
public struct NetlinkDatagram: Sendable {
    /// The path events, in datagram order.
    public var events: [NetworkPathEvent] = []
    /// One error per damaged message, in datagram order.
    public var damaged: [SchedulingError] = []

    /// An empty datagram.
    public init() {}
}
