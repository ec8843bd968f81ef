/// A route as rtnetlink reports it.
public struct NetworkRoute: Sendable, Equatable {
    /// `AF_INET` (2) or `AF_INET6` (10).
    public var family: UInt8
    /// Destination address bytes (empty for a default route).
    public var destination: [UInt8]
    /// Destination prefix length (0 = default route).
    public var prefixLength: UInt8
    /// Gateway address bytes, if any.
    public var gateway: [UInt8]?
    /// Output interface index, if any.
    public var outputInterface: Int32?
    /// Routing table.
    public var table: UInt32

    /// Creates a route description.
    public init(
        family: UInt8, destination: [UInt8], prefixLength: UInt8, gateway: [UInt8]?, outputInterface: Int32?,
        table: UInt32
    ) {
        self.family = family
        self.destination = destination
        self.prefixLength = prefixLength
        self.gateway = gateway
        self.outputInterface = outputInterface
        self.table = table
    }
}
