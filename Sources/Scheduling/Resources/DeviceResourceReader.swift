/// Reads thermal, battery and memory state from sysfs and procfs under an injectable root (tests pass a fake tree).
///
/// - `/sys/class/thermal/thermal_zone*/temp`: millidegrees Celsius; the hottest zone wins.
/// - `/sys/class/power_supply/*/type` = `Battery`: `capacity` (percent) and `status` (`Charging`, `Full`,
///   `Discharging`, `Not charging`); `type` = `Mains`/`USB` with `online` = 1 means external power.
/// - `/proc/meminfo` `MemAvailable` (kB), and cgroup v2: the process's cgroup from `/proc/self/cgroup` (`0::/path`),
///   `memory.max` (`max` = no limit) minus `memory.current` under `/sys/fs/cgroup/path`.
/// Absent or malformed files leave the field nil.
public struct DeviceResourceReader: Sendable {
    /// Prefix of every path read (`""` for the real system).
    public let root: String

    /// Creates a reader over `root` (the real filesystem by default).
    public init(root: String = "") { self.root = root }

    /// Reads everything.
    public func read() -> ResourceSnapshot {
        let battery = readBattery()
        return ResourceSnapshot(
            temperatureCelsius: readTemperature(), batteryPercent: battery.percent, charging: battery.charging,
            availableMemoryBytes: readAvailableMemory())
    }

    /// Hottest thermal zone in °C.
    public func readTemperature() -> Double? {
        let base = root + "/sys/class/thermal"
        guard let zones = SystemCalls.listDirectory(base) else { return nil }
        var hottest: Double?
        for zone in zones where zone.hasPrefix("thermal_zone") {
            guard let text = text(base + "/" + zone + "/temp"), let milli = Double(text) else { continue }
            let celsius = milli / 1000
            // Sensors report garbage (e.g. -273 or 0x7fffffff) when absent; keep plausible values only.
            guard celsius > -50, celsius < 200 else { continue }
            hottest = max(hottest ?? celsius, celsius)
        }
        return hottest
    }

    /// Lowest battery charge and whether external power is present.
    public func readBattery() -> (percent: Double?, charging: Bool?) {
        let base = root + "/sys/class/power_supply"
        guard let supplies = SystemCalls.listDirectory(base) else { return (nil, nil) }
        var percent: Double?
        var charging: Bool?
        for supply in supplies {
            let path = base + "/" + supply
            switch text(path + "/type") {
            case "Battery":
                if let value = text(path + "/capacity").flatMap(Double.init), value >= 0, value <= 100 {
                    percent = min(percent ?? value, value)
                }
                if let status = text(path + "/status") {
                    let on = status == "Charging" || status == "Full" || status == "Not charging"
                    charging = (charging ?? false) || on
                }
            case "Mains", "USB", "USB_C", "USB_PD":
                if let online = text(path + "/online") { charging = (charging ?? false) || online == "1" }
            default:
                continue
            }
        }
        return (percent, charging)
    }

    /// Available memory in bytes (MemAvailable, lowered to the cgroup's headroom).
    public func readAvailableMemory() -> Int64? {
        var available: Int64?
        if let meminfo = text(root + "/proc/meminfo") {
            for line in meminfo.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
                let fields = line.split(separator: " ")
                if fields.count >= 2, let kb = Int64(fields[1]), kb >= 0 { available = kb * 1024 }
            }
        }
        if let headroom = cgroupHeadroom() { available = min(available ?? headroom, headroom) }
        return available
    }

    private func cgroupHeadroom() -> Int64? {
        var directory = root + "/sys/fs/cgroup"
        if let membership = text(root + "/proc/self/cgroup") {
            for line in membership.split(separator: "\n") where line.hasPrefix("0::") {
                let path = line.dropFirst(3)
                if path != "/" && !path.contains("..") { directory += String(path) }
            }
        }
        guard let limitText = text(directory + "/memory.max"), limitText != "max", let limit = Int64(limitText) else {
            return nil
        }
        let current = text(directory + "/memory.current").flatMap { Int64($0) } ?? 0
        return max(0, limit - current)
    }

    private func text(_ path: String) -> String? {
        guard let bytes = SystemCalls.readFile(path, limit: 1 << 16) else { return nil }
        let string = String(decoding: bytes, as: UTF8.self)
        return String(string.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
