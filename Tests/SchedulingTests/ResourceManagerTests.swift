import AetherIO
import AetherTestSupport
import Testing

@testable import AetherScheduling

@Suite struct DeviceResourceReaderTests {
    @Test func readsThermalBatteryMemoryAndCgroupFromAFakeTree() throws {
        let tree = try FakeTree()
        defer { tree.destroy() }
        try tree.write("sys/class/thermal/thermal_zone0/temp", "41000\n")
        try tree.write("sys/class/thermal/thermal_zone1/temp", "58500\n")
        try tree.write("sys/class/thermal/thermal_zone2/temp", "-273000\n")  // absent sensor
        try tree.write("sys/class/thermal/cooling_device0/cur_state", "1\n")
        try tree.write("sys/class/power_supply/BAT0/type", "Battery\n")
        try tree.write("sys/class/power_supply/BAT0/capacity", "37\n")
        try tree.write("sys/class/power_supply/BAT0/status", "Discharging\n")
        try tree.write("sys/class/power_supply/AC/type", "Mains\n")
        try tree.write("sys/class/power_supply/AC/online", "0\n")
        try tree.write("proc/meminfo", "MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    4000000 kB\n")
        try tree.write("proc/self/cgroup", "0::/app.slice/aether.service\n")
        try tree.write("sys/fs/cgroup/app.slice/aether.service/memory.max", "1073741824\n")
        try tree.write("sys/fs/cgroup/app.slice/aether.service/memory.current", "873741824\n")
        let snapshot = DeviceResourceReader(root: tree.root).read()
        #expect(snapshot.temperatureCelsius == 58.5)
        #expect(snapshot.batteryPercent == 37)
        #expect(snapshot.charging == false)
        #expect(snapshot.availableMemoryBytes == 200_000_000)
    }

    @Test func memoryIsMemAvailableWhenTheCgroupHasNoLimit() throws {
        let tree = try FakeTree()
        defer { tree.destroy() }
        try tree.write("proc/meminfo", "MemAvailable:    2048 kB\n")
        try tree.write("sys/fs/cgroup/memory.max", "max\n")
        let available = DeviceResourceReader(root: tree.root).readAvailableMemory()
        #expect(available == Int64(2048 * 1024))
    }

    @Test func externalPowerCountsAsCharging() throws {
        let tree = try FakeTree()
        defer { tree.destroy() }
        try tree.write("sys/class/power_supply/BAT1/type", "Battery\n")
        try tree.write("sys/class/power_supply/BAT1/capacity", "12\n")
        try tree.write("sys/class/power_supply/BAT1/status", "Discharging\n")
        try tree.write("sys/class/power_supply/ucsi/type", "USB\n")
        try tree.write("sys/class/power_supply/ucsi/online", "1\n")
        let battery = DeviceResourceReader(root: tree.root).readBattery()
        #expect(battery.percent == 12)
        #expect(battery.charging == true)
    }

    @Test func absentAndMalformedFilesMeanUnknown() throws {
        let tree = try FakeTree()
        defer { tree.destroy() }
        #expect(DeviceResourceReader(root: tree.root).read() == ResourceSnapshot())
        try tree.write("sys/class/thermal/thermal_zone0/temp", "hot\n")
        try tree.write("sys/class/power_supply/BAT0/type", "Battery\n")
        try tree.write("sys/class/power_supply/BAT0/capacity", "250\n")
        try tree.write("proc/meminfo", "MemAvailable: lots\n")
        let snapshot = DeviceResourceReader(root: tree.root).read()
        #expect(snapshot.temperatureCelsius == nil)
        #expect(snapshot.batteryPercent == nil)
        #expect(snapshot.availableMemoryBytes == nil)
        #expect(DeviceResourceReader(root: tree.root + "/missing").read() == ResourceSnapshot())
    }
}

@Suite struct ResourceStateMachineTests {
    static func hot(_ celsius: Double) -> ResourceSnapshot { ResourceSnapshot(temperatureCelsius: celsius) }

    /// Feeds the same reading until the debounce has passed; returns the applied level.
    static func settle(_ machine: inout ResourceStateMachine, _ snapshot: ResourceSnapshot, from time: Double)
        -> DegradationLevel
    {
        machine.update(snapshot, at: time)
        return machine.update(snapshot, at: time + 5)
    }

    @Test func risesOnlyPastThresholdTimesOnePointZeroFive() {
        // Level 1 threshold is 45 °C: enter at 47.25, not at 47.2.
        var machine = ResourceStateMachine()
        #expect(Self.settle(&machine, Self.hot(47.2), from: 0) == .normal)
        #expect(Self.settle(&machine, Self.hot(47.25), from: 100) == .light)
    }

    @Test func fallsOnlyBelowThresholdTimesZeroPointNine() {
        var machine = ResourceStateMachine()
        _ = Self.settle(&machine, Self.hot(48), from: 0)
        #expect(machine.level == .light)
        // 40.5 = 45 × 0.90: still light; below it, normal.
        #expect(Self.settle(&machine, Self.hot(40.5), from: 100) == .light)
        #expect(Self.settle(&machine, Self.hot(40.4), from: 200) == .normal)
    }

    @Test func debounceNeedsFiveSecondsOfTheSameLevel() {
        var machine = ResourceStateMachine()
        #expect(machine.update(Self.hot(60), at: 0) == .normal)
        #expect(machine.update(Self.hot(60), at: 4.9) == .normal)
        #expect(machine.update(Self.hot(60), at: 5) == .moderate)
        // A short dip does not flap the level; a sustained one does.
        #expect(machine.update(Self.hot(30), at: 6) == .moderate)
        #expect(machine.update(Self.hot(60), at: 7) == .moderate)
        #expect(machine.update(Self.hot(30), at: 8) == .moderate)
        #expect(machine.update(Self.hot(30), at: 13) == .normal)
    }

    @Test(arguments: [
        (40.0, DegradationLevel.normal), (50, .light), (60, .moderate), (70, .heavy), (80, .severe), (95, .paused),
    ])
    func temperatureMapsToSixLevels(celsius: Double, level: DegradationLevel) {
        var machine = ResourceStateMachine()
        #expect(Self.settle(&machine, Self.hot(celsius), from: 0) == level)
    }

    @Test func lowBatteryCountsOnlyWhenDischarging() {
        var machine = ResourceStateMachine()
        let low = ResourceSnapshot(batteryPercent: 8, charging: false)
        #expect(Self.settle(&machine, low, from: 0) == .severe)  // 8 ≤ 10 / 1.05 (the level-4 threshold)
        var charging = ResourceStateMachine()
        #expect(Self.settle(&charging, ResourceSnapshot(batteryPercent: 8, charging: true), from: 0) == .normal)
    }

    @Test func batteryHysteresisMirrorsForLowerIsWorse() {
        var machine = ResourceStateMachine()
        // Level 1 at 50 %: enter at ≤ 47.62 (50/1.05), leave above 55.56 (50/0.9).
        #expect(Self.settle(&machine, ResourceSnapshot(batteryPercent: 47.7, charging: false), from: 0) == .normal)
        #expect(Self.settle(&machine, ResourceSnapshot(batteryPercent: 47.6, charging: false), from: 10) == .light)
        #expect(Self.settle(&machine, ResourceSnapshot(batteryPercent: 55.5, charging: false), from: 20) == .light)
        #expect(Self.settle(&machine, ResourceSnapshot(batteryPercent: 55.6, charging: false), from: 30) == .normal)
    }

    @Test func lowMemoryRaisesTheLevelAndTheWorstSignalWins() {
        var machine = ResourceStateMachine()
        let snapshot = ResourceSnapshot(
            temperatureCelsius: 50, batteryPercent: 90, charging: false, availableMemoryBytes: 100 * 1_048_576)
        #expect(Self.settle(&machine, snapshot, from: 0) == .severe)  // 100 MiB ≤ 128 / 1.05
        #expect(machine.signalLevels == [1, 0, 4])
    }

    @Test func risingTemperatureTakesAPredictiveStep() {
        var machine = ResourceStateMachine()
        // 0.5 °C/min below any threshold: level 0 plus the predictive step.
        var level = DegradationLevel.normal
        for second in stride(from: 0.0, through: 60, by: 5) {
            level = machine.update(Self.hot(30 + second / 60 * 0.5), at: second)
        }
        #expect(machine.predictiveStep)
        #expect(level == .light)
        // 0.2 °C/min is not enough.
        var slow = ResourceStateMachine()
        for second in stride(from: 0.0, through: 60, by: 5) {
            slow.update(Self.hot(30 + second / 60 * 0.2), at: second)
        }
        #expect(!slow.predictiveStep)
        #expect(slow.level == .normal)
    }

    @Test func unknownReadingsMeanNoDegradation() {
        var machine = ResourceStateMachine()
        #expect(Self.settle(&machine, ResourceSnapshot(), from: 0) == .normal)
    }

    @Test func levelsCarryTheirBudgets() {
        #expect(DegradationLevel.normal.parallelismCap == nil)
        #expect(DegradationLevel.paused.parallelismCap == 0)
        #expect(DegradationLevel.normal.allowsPrefetch && !DegradationLevel.light.allowsPrefetch)
        #expect(!DegradationLevel.heavy.allowsErasureCoding)
        #expect(DegradationLevel.allCases.count == 6)
    }

    @Test func managerReadsTheTreeOnTheInjectedClock() throws {
        let tree = try FakeTree()
        defer { tree.destroy() }
        try tree.write("sys/class/thermal/thermal_zone0/temp", "70000\n")
        let clock = ManualClock()
        let manager = DeviceResourceMonitor(reader: DeviceResourceReader(root: tree.root), clock: clock)
        #expect(manager.refresh() == .normal)
        clock.advance(by: .seconds(5))
        #expect(manager.refresh() == .heavy)
        #expect(manager.lastSnapshot.temperatureCelsius == 70)
        try tree.write("sys/class/thermal/thermal_zone0/temp", "30000\n")
        clock.advance(by: .seconds(1))
        #expect(manager.refresh() == .heavy)
        clock.advance(by: .seconds(5))
        #expect(manager.refresh() == .normal)
    }
}
