/// Classifies an interface as wired, wireless or cellular from sysfs (under an injectable root):
/// `/sys/class/net/IF/wireless` or `phy80211` → wireless; `uevent` `DEVTYPE=wlan` → wireless, `DEVTYPE=wwan` →
/// cellular; WWAN-style names (`wwan*`, `rmnet*`, `ccmni*`) or raw-IP hardware types → cellular; loopback by
/// hardware type; software links (an `IFLA_INFO_KIND`, or no `device` link in sysfs) → virtual; an Ethernet
/// interface with a device → wired.
public struct InterfaceClassifier: Sendable {
    /// Prefix of the sysfs paths (`""` for the real system).
    public let root: String

    /// Creates a classifier over `root`.
    public init(root: String = "") { self.root = root }

    /// The kind of `link`.
    public func classify(_ link: NetworkLink) -> InterfaceKind {
        if link.hardwareType == 772 { return .loopback }  // ARPHRD_LOOPBACK
        let base = root + "/sys/class/net/" + link.name
        let safeName = !link.name.isEmpty && !link.name.contains("/") && link.name != "." && link.name != ".."
        if safeName {
            if SystemCalls.exists(base + "/wireless") || SystemCalls.exists(base + "/phy80211") { return .wireless }
            if let uevent = SystemCalls.readFile(base + "/uevent", limit: 4096) {
                let text = String(decoding: uevent, as: UTF8.self)
                if text.contains("DEVTYPE=wlan") { return .wireless }
                if text.contains("DEVTYPE=wwan") { return .cellular }
            }
        }
        for prefix in ["wwan", "rmnet", "ccmni", "wwp"] where link.name.hasPrefix(prefix) { return .cellular }
        if link.hardwareType == 519 || link.hardwareType == 0xFFFE { return .cellular }  // ARPHRD_RAWIP, ARPHRD_NONE
        if link.linkKind != nil { return .virtual }
        if safeName && link.hardwareType == 1 {  // ARPHRD_ETHER
            return SystemCalls.exists(base + "/device") ? .wired : .virtual
        }
        return .unknown
    }
}
