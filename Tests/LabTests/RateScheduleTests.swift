import Testing

@testable import AetherLinkLab

/// The rate over time: constant rates, traces from an offset and cycled, outages over both, and when a number of
/// bytes is served.
@Suite struct RateScheduleTests {
    static let second: Int64 = 1_000_000_000

    @Test func aConstantRateServesBytesInTheirSerializationTime() {
        let schedule = RateSchedule(rate: .constant(megabitsPerSecond: 8), outages: [])
        // 1000 bytes at 8 Mbit/s: 1 ms.
        #expect(schedule.finish(bytes: 1000, from: 0) == 1_000_000)
        #expect(schedule.finish(bytes: 1000, from: 5 * Self.second) == 5 * Self.second + 1_000_000)
        #expect(schedule.nextChange(after: 0) == .max)
        #expect(schedule.capacityBits(from: 0, to: 2 * Self.second) == 16e6)
    }

    @Test func aTraceStartsAtItsOffsetAndCyclesFromItsBeginning() {
        let slots = [
            LinkLabRate.Slot(duration: 1, megabitsPerSecond: 1), LinkLabRate.Slot(duration: 1, megabitsPerSecond: 2),
            LinkLabRate.Slot(duration: 1, megabitsPerSecond: 3),
        ]
        let schedule = RateSchedule(rate: .trace(slots, startingAt: 1.5), outages: [])
        // Time 0 is 1.5 s into the trace (the 2 Mbit/s slot); 1.6 s later it has wrapped to the first slot.
        #expect(schedule.bitsPerSecond(at: 0) == 2e6)
        #expect(schedule.nextChange(after: 0) == Self.second / 2)
        #expect(schedule.bitsPerSecond(at: Self.second) == 3e6)
        #expect(schedule.bitsPerSecond(at: Self.second * 16 / 10) == 1e6)
        // Capacity over the first 3 s: 0.5 s at 2, 1 s at 3, 1 s at 1, 0.5 s at 2.
        #expect(schedule.capacityBits(from: 0, to: 3 * Self.second) == 6e6)
    }

    @Test func serviceSpansSlotBoundaries() {
        let slots = [
            LinkLabRate.Slot(duration: 1, megabitsPerSecond: 8), LinkLabRate.Slot(duration: 1, megabitsPerSecond: 4),
        ]
        let schedule = RateSchedule(rate: .trace(slots), outages: [])
        // 1.5 MB from 0.5 s: 0.5 MB by the boundary at 8 Mbit/s, then 1 MB at 4 Mbit/s = 2 s more... the second slot
        // holds only 0.5 MB, so the cycle's next 8 Mbit/s second serves the last 0.5 MB in 0.5 s.
        #expect(schedule.finish(bytes: 1_500_000, from: Self.second / 2) == 2 * Self.second + Self.second / 2)
    }

    @Test func anOutageStopsServiceUntilItEnds() {
        let schedule = RateSchedule(
            rate: .constant(megabitsPerSecond: 8), outages: [LinkLabOutage(start: 1, length: 0.5)])
        #expect(schedule.bitsPerSecond(at: Self.second) == 0)
        #expect(schedule.bitsPerSecond(at: Self.second * 3 / 2) == 8e6)
        // 1000 bytes started 0.5 ms before the outage: half served before it, half after it.
        let start = Self.second - 500_000
        #expect(schedule.finish(bytes: 1000, from: start) == Self.second * 3 / 2 + 500_000)
        #expect(schedule.capacityBits(from: 0, to: 2 * Self.second) == 12e6)
    }

    @Test func overlappingOutagesMerge() {
        let schedule = RateSchedule(
            rate: .constant(megabitsPerSecond: 1),
            outages: [LinkLabOutage(start: 2, length: 2), LinkLabOutage(start: 1, length: 2)])
        #expect(schedule.nextChange(after: Self.second) == 4 * Self.second)
        #expect(schedule.capacityBits(from: 0, to: 5 * Self.second) == 2e6)
    }

    @Test func aTraceOfZeroSlotsIsServedOnlyInItsNonZeroOnes() {
        let slots = [
            LinkLabRate.Slot(duration: 2, megabitsPerSecond: 0), LinkLabRate.Slot(duration: 1, megabitsPerSecond: 8),
        ]
        let schedule = RateSchedule(rate: .trace(slots), outages: [])
        #expect(schedule.finish(bytes: 1000, from: 0) == 2 * Self.second + 1_000_000)
    }
}
