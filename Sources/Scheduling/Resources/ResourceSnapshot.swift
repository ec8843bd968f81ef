/// One reading of the device's state; nil means "unknown" (the file is absent or unreadable).
public struct ResourceSnapshot: Sendable, Equatable {
    /// Hottest thermal zone, °C.
    public var temperatureCelsius: Double?
    /// Battery charge, percent (the lowest battery when there are several).
    public var batteryPercent: Double?
    /// Whether the device is on external power or the battery is charging or full.
    public var charging: Bool?
    /// Memory available to this process: /proc/meminfo MemAvailable, lowered to the cgroup v2 limit's headroom.
    public var availableMemoryBytes: Int64?

    /// Creates a snapshot.
    public init(
        temperatureCelsius: Double? = nil, batteryPercent: Double? = nil, charging: Bool? = nil,
        availableMemoryBytes: Int64? = nil
    ) {
        self.temperatureCelsius = temperatureCelsius
        self.batteryPercent = batteryPercent
        self.charging = charging
        self.availableMemoryBytes = availableMemoryBytes
    }
}
