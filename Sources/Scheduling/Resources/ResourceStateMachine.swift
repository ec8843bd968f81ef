/// The decision matrix from device readings to a degradation level, with Schmitt hysteresis and a debounce.
///
/// Each signal has five thresholds (levels 1–5). A signal's own level rises past threshold t only when the reading
/// crosses t × 1.05 (for "lower is worse" signals, t / 1.05) and falls back below it only when the reading crosses
/// t × 0.90 (t / 0.90), so a reading hovering at a threshold does not flap. The combined level is the worst signal,
/// plus one when the temperature rises faster than 0.3 °C/min (the predictive step). A new combined level is applied
/// only after it has held for the 5 s debounce (at once with a debounce of 0). Unknown readings (nil) count as level 0
/// for their signal.
public struct ResourceStateMachine: Sendable, Equatable {
    /// Thresholds and timing.
    public struct Configuration: Sendable, Equatable {
        /// Temperatures (°C) for levels 1–5.
        public var temperatureThresholds: [Double] = [45, 55, 65, 75, 85]
        /// Battery percentages (when discharging) for levels 1–5.
        public var batteryThresholds: [Double] = [50, 30, 20, 10, 5]
        /// Available memory (MiB) for levels 1–5.
        public var memoryThresholdsMiB: [Double] = [1024, 512, 256, 128, 64]
        /// Multiplier of a threshold to enter its level.
        public var riseFactor = 1.05
        /// Multiplier of a threshold to leave its level.
        public var fallFactor = 0.90
        /// Seconds a new level must hold before it applies.
        public var debounceSeconds = 5.0
        /// Temperature slope (°C per minute) that triggers the predictive step.
        public var predictiveSlopePerMinute = 0.3
        /// Seconds of temperature history the slope is measured over (at least half of it must be present).
        public var slopeWindowSeconds = 60.0
        /// The defaults.
        public init() {}
    }

    /// The configuration in use.
    public let configuration: Configuration
    /// The applied level.
    public private(set) var level: DegradationLevel = .normal
    /// Per-signal levels after hysteresis (temperature, battery, memory).
    public private(set) var signalLevels: [Int] = [0, 0, 0]
    /// Whether the last update applied the predictive step.
    public private(set) var predictiveStep = false
    private var pending: (level: DegradationLevel, since: Double)?
    private var temperatures: [(time: Double, celsius: Double)] = []

    /// Starts at `normal`.
    public init(configuration: Configuration = Configuration()) { self.configuration = configuration }

    /// Folds in a reading taken at `now`; returns the applied level.
    @discardableResult
    public mutating func update(_ snapshot: ResourceSnapshot, at now: Double) -> DegradationLevel {
        let c = configuration
        signalLevels[0] = Self.step(
            signalLevels[0], value: snapshot.temperatureCelsius, thresholds: c.temperatureThresholds,
            higherIsWorse: true, rise: c.riseFactor, fall: c.fallFactor)
        let battery = snapshot.charging == true ? nil : snapshot.batteryPercent
        signalLevels[1] = Self.step(
            signalLevels[1], value: battery, thresholds: c.batteryThresholds, higherIsWorse: false,
            rise: c.riseFactor, fall: c.fallFactor)
        let memory = snapshot.availableMemoryBytes.map { Double($0) / 1_048_576 }
        signalLevels[2] = Self.step(
            signalLevels[2], value: memory, thresholds: c.memoryThresholdsMiB, higherIsWorse: false,
            rise: c.riseFactor, fall: c.fallFactor)

        var candidate = signalLevels.max() ?? 0
        predictiveStep = false
        if let celsius = snapshot.temperatureCelsius {
            temperatures.append((now, celsius))
            temperatures.removeAll { now - $0.time > c.slopeWindowSeconds }
            if let first = temperatures.first, now - first.time >= c.slopeWindowSeconds / 2 {
                let slope = (celsius - first.celsius) / (now - first.time) * 60
                if slope > c.predictiveSlopePerMinute {
                    candidate += 1
                    predictiveStep = true
                }
            }
        }
        let target = DegradationLevel(rawValue: min(candidate, 5)) ?? .paused
        if target == level {
            pending = nil
        } else if c.debounceSeconds <= 0 {
            // No debounce: the new level applies at the reading that shows it.
            level = target
            pending = nil
        } else if let waiting = pending, waiting.level == target {
            if now - waiting.since >= c.debounceSeconds {
                level = target
                pending = nil
            }
        } else {
            pending = (target, now)
        }
        return level
    }

    /// One signal's level after hysteresis, starting from `current`.
    static func step(
        _ current: Int, value: Double?, thresholds: [Double], higherIsWorse: Bool, rise: Double, fall: Double
    ) -> Int {
        guard let value, thresholds.count == 5 else { return 0 }
        func crossesUp(_ index: Int) -> Bool {
            higherIsWorse ? value >= thresholds[index] * rise : value <= thresholds[index] / rise
        }
        func staysAbove(_ index: Int) -> Bool {
            higherIsWorse ? value >= thresholds[index] * fall : value <= thresholds[index] / fall
        }
        var level = current
        while level < 5 && crossesUp(level) { level += 1 }
        while level > 0 && !staysAbove(level - 1) { level -= 1 }
        return level
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.level == rhs.level && lhs.signalLevels == rhs.signalLevels && lhs.predictiveStep == rhs.predictiveStep
    }
}
