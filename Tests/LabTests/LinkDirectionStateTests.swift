import Testing

@testable import AetherLinkLab

/// One direction of the delay line on a made-up clock: service at the rate, the fixed delay, drop-tail queue limits
/// in bytes and in time, loss at its rate, flushes and clock restarts.
@Suite struct LinkDirectionStateTests {
    static let millisecond: Int64 = 1_000_000

    static func packet(_ size: Int) -> [UInt8] { [UInt8](repeating: 0x45, count: size) }

    static func direction(
        rate: Double = 8, delay: Double = 0.04, loss: Double = 0, queue: LinkLabQueueLimit = .bytes(1_000_000),
        outages: [LinkLabOutage] = []
    ) -> LinkLabDirection {
        LinkLabDirection(
            delay: delay, lossRate: loss, rate: .constant(megabitsPerSecond: rate), queueLimit: queue,
            outages: outages)
    }

    /// Drives `state` from 0 to `end` in 0.1 ms steps; the release time of every packet, in order.
    static func releases(_ state: inout LinkDirectionState, until end: Int64) -> [Int64] {
        var times: [Int64] = []
        var now: Int64 = 0
        while now <= end {
            state.advance(to: now)
            while let packet = state.release(by: now) { times.append(packet.time) }
            now += 100_000
        }
        return times
    }

    @Test func packetsLeaveAtTheRateAndArriveOneDelayLater() {
        var state = LinkDirectionState(Self.direction(), epoch: 0, seed: 1)
        for _ in 0..<3 {
            let accepted = state.offer(Self.packet(1000), at: 0)
            #expect(accepted)
        }
        // 1000 bytes at 8 Mbit/s is 1 ms each: they leave at 1, 2 and 3 ms and are due 40 ms later.
        #expect(Self.releases(&state, until: 50 * Self.millisecond) == [41, 42, 43].map { $0 * Self.millisecond })
        #expect(state.counters.offered.packets == 3)
        #expect(state.nextEvent == nil)
    }

    @Test func anIdleServerStartsServiceAtTheArrival() {
        var state = LinkDirectionState(Self.direction(delay: 0), epoch: 0, seed: 1)
        state.offer(Self.packet(1000), at: 0)
        state.advance(to: 10 * Self.millisecond)
        state.offer(Self.packet(1000), at: 10 * Self.millisecond)
        #expect(state.nextEvent == 1 * Self.millisecond)
        #expect(state.release(by: 10 * Self.millisecond)?.time == 1 * Self.millisecond)
        #expect(state.nextEvent == 11 * Self.millisecond)
    }

    @Test func theQueueDropsAtItsTailOverABytesLimit() {
        var state = LinkDirectionState(Self.direction(queue: .bytes(3000)), epoch: 0, seed: 1)
        let first = state.offer(Self.packet(1500), at: 0)
        let second = state.offer(Self.packet(1500), at: 0)
        let third = state.offer(Self.packet(100), at: 0)
        #expect(first && second && !third)
        #expect(state.counters.droppedQueue.packets == 1 && state.counters.droppedQueue.bytes == 100)
        // Once the first has left, there is room again.
        state.advance(to: 2 * Self.millisecond)
        let fourth = state.offer(Self.packet(1500), at: 2 * Self.millisecond)
        #expect(fourth)
    }

    @Test func aTimeLimitHoldsWhatTheCurrentRateServesInThatTime() {
        // 8 Mbit/s for 10 ms: 10,000 bytes.
        var state = LinkDirectionState(Self.direction(queue: .time(0.01)), epoch: 0, seed: 1)
        #expect(state.queueLimitBytes(at: 0) == 10_000)
        var accepted = 0
        for _ in 0..<20 where state.offer(Self.packet(1000), at: 0) { accepted += 1 }
        #expect(accepted == 10)
        // During an outage the limit is the floor of two full packets.
        let outage = LinkDirectionState(
            Self.direction(queue: .time(0.01), outages: [LinkLabOutage(start: 0, length: 1)]), epoch: 0, seed: 1)
        #expect(outage.queueLimitBytes(at: 0) == LinkLabQueueLimit.minimumBytes)
    }

    @Test(arguments: [0.01, 0.03, 0.2])
    func lossHitsItsRateWithinThreeSigma(rate: Double) {
        for seed in UInt64(1)...5 {
            var state = LinkDirectionState(
                Self.direction(rate: 10_000, delay: 0, loss: rate, queue: .bytes(1 << 30)), epoch: 0, seed: seed)
            let count = 20_000
            for _ in 0..<count { state.offer(Self.packet(100), at: 0) }
            state.advance(to: 1_000_000_000)
            let lost = Double(state.counters.droppedLoss.packets)
            let sigma = (rate * (1 - rate) / Double(count)).squareRoot()
            #expect(abs(lost / Double(count) - rate) < 3 * sigma, "seed \(seed): \(lost) of \(count) lost")
            var delivered = 0
            while state.release(by: 1_000_000_000) != nil { delivered += 1 }
            #expect(delivered + Int(lost) == count)
        }
    }

    @Test func theSameSeedLosesTheSamePackets() {
        func lostIndices(seed: UInt64) -> [Int] {
            var state = LinkDirectionState(
                Self.direction(rate: 10_000, delay: 0, loss: 0.1, queue: .bytes(1 << 30)), epoch: 0, seed: seed)
            var lost: [Int] = []
            for index in 0..<500 {
                state.offer(Self.packet(100), at: 0)
                state.advance(to: Int64.max / 2)
                if state.release(by: Int64.max / 2) == nil { lost.append(index) }
            }
            return lost
        }
        #expect(lostIndices(seed: 7) == lostIndices(seed: 7))
        #expect(lostIndices(seed: 7) != lostIndices(seed: 8))
    }

    @Test func anOutageHoldsThePacketsUntilItEnds() {
        var state = LinkDirectionState(
            Self.direction(delay: 0.01, outages: [LinkLabOutage(start: 0, length: 0.5)]), epoch: 0, seed: 1)
        state.offer(Self.packet(1000), at: 0)
        #expect(state.nextEvent == 500 * Self.millisecond + Self.millisecond)
        #expect(Self.releases(&state, until: 600 * Self.millisecond) == [511 * Self.millisecond])
    }

    @Test func aFlushDropsTheQueueAndTheDelayLineAsPathDrops() {
        var state = LinkDirectionState(Self.direction(), epoch: 0, seed: 1)
        for _ in 0..<4 { state.offer(Self.packet(1000), at: 0) }
        state.advance(to: 2 * Self.millisecond)  // two in the delay line, two queued
        state.flush()
        #expect(state.counters.droppedPath.packets == 4)
        #expect(state.counters.droppedPath.bytes == 4000)
        #expect(state.nextEvent == nil)
        #expect(state.queuedBytes == 0)
    }

    @Test func restartingTheClockRestartsATraceFromItsOffset() {
        let slots = [
            LinkLabRate.Slot(duration: 1, megabitsPerSecond: 8), LinkLabRate.Slot(duration: 1, megabitsPerSecond: 0.8),
        ]
        var state = LinkDirectionState(
            LinkLabDirection(delay: 0, rate: .trace(slots), queueLimit: .bytes(1 << 20)), epoch: 0, seed: 1)
        // 1.5 s in: the slow slot, 10 ms per 1000 bytes.
        let now = 1_500 * Self.millisecond
        state.offer(Self.packet(1000), at: now)
        #expect(state.nextEvent == now + 10 * Self.millisecond)
        state.restartClock(at: now)
        // Time zero again: the fast slot, 1 ms.
        #expect(state.nextEvent == now + Self.millisecond)
    }
}
