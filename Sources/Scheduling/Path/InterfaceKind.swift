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
