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
