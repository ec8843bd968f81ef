/// A change the path observer saw.
public enum NetworkPathEvent: Sendable, Equatable {
    /// A link appeared (or was reported for the first time).
    case linkAdded(NetworkLink)
    /// A link's flags or attributes changed.
    case linkChanged(NetworkLink)
    /// A link disappeared.
    case linkRemoved(NetworkLink)
    /// A route was added.
    case routeAdded(NetworkRoute)
    /// A route was removed.
    case routeRemoved(NetworkRoute)

    /// Whether this change can move traffic to another path (link state, or a default route).
    public var changesPath: Bool {
        switch self {
        case .linkAdded, .linkChanged, .linkRemoved: true
        case .routeAdded(let route), .routeRemoved(let route): route.prefixLength == 0
        }
    }
}

/// Kind of network interface.
public enum InterfaceKind: String, Sendable, Equatable {
    /// Ethernet with a physical device.
    case wired
    /// Wi-Fi.
    case wireless
    /// Mobile broadband (WWAN, rmnet, raw-IP).
    case cellular
    /// The loopback device.
    case loopback
    /// Software links (veth, bridge, tun, WireGuard ...).
    case virtual
    /// Not determinable.
    case unknown
}

/// A network interface as rtnetlink reports it.
public struct NetworkLink: Sendable, Equatable {
    /// Interface index.
    public var index: Int32
    /// Interface name (`IFLA_IFNAME`).
    public var name: String
    /// `IFF_UP`.
    public var isUp: Bool
    /// `IFF_RUNNING` (carrier).
    public var isRunning: Bool
    /// ARPHRD hardware type.
    public var hardwareType: UInt16
    /// `IFLA_INFO_KIND` of software links (`veth`, `bridge`, ...), nil for hardware.
    public var linkKind: String?
    /// Classified kind (filled in by the observer from sysfs).
    public var kind: InterfaceKind

    /// Creates a link description.
    public init(
        index: Int32, name: String, isUp: Bool, isRunning: Bool, hardwareType: UInt16, linkKind: String?,
        kind: InterfaceKind = .unknown
    ) {
        self.index = index
        self.name = name
        self.isUp = isUp
        self.isRunning = isRunning
        self.hardwareType = hardwareType
        self.linkKind = linkKind
        self.kind = kind
    }
}

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
