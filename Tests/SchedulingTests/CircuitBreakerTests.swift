import AetherIO
import AetherTestSupport
import Testing

@testable import AetherScheduling

@Suite struct CircuitBreakerTests {
    typealias Machine = CircuitBreakerStateMachine

    static func configuration() -> Machine.Configuration {
        var c = Machine.Configuration()
        c.windowSize = 10
        c.minimumRequests = 4
        c.failureRateThreshold = 0.5
        c.coolDown = 30
        c.rapidResetThreshold = 5
        c.rapidResetWindow = 2
        return c
    }

    static func opened(at time: Double = 0) -> Machine {
        var machine = Machine(configuration: configuration())
        for _ in 0..<4 { machine.recordFailure(at: time) }
        return machine
    }

    @Test func staysClosedBelowTheMinimumRequestCount() {
        var machine = Machine(configuration: Self.configuration())
        for _ in 0..<3 { machine.recordFailure(at: 0) }
        #expect(machine.state == .closed)
        machine.recordFailure(at: 0)
        #expect(machine.state == .open(until: 30))
    }

    @Test func opensExactlyAtTheFailureRateThreshold() {
        var below = Machine(configuration: Self.configuration())
        for _ in 0..<3 { below.recordSuccess(at: 0) }
        for _ in 0..<2 { below.recordFailure(at: 0) }  // 2 of 5 = 0.4
        #expect(below.state == .closed)
        var at = Machine(configuration: Self.configuration())
        for _ in 0..<2 { at.recordSuccess(at: 0) }
        for _ in 0..<2 { at.recordFailure(at: 0) }  // 2 of 4 = 0.5
        #expect(at.state == .open(until: 30))
        #expect(at.openCount == 1)
    }

    @Test func oldOutcomesLeaveTheWindow() {
        var machine = Machine(configuration: Self.configuration())
        for _ in 0..<3 { machine.recordFailure(at: 0) }
        // 61 s later the earlier failures are gone: one failure among fresh successes does not open it.
        for _ in 0..<5 { machine.recordSuccess(at: 61) }
        machine.recordFailure(at: 61)
        #expect(machine.state == .closed)
        #expect(abs(machine.failureRate - 1.0 / 6) < 1e-12)
    }

    @Test func windowKeepsOnlyTheLastOutcomes() {
        var machine = Machine(configuration: Self.configuration())
        for _ in 0..<10 { machine.recordSuccess(at: 0) }
        for _ in 0..<4 { machine.recordFailure(at: 0) }  // 4 of the last 10
        #expect(machine.state == .closed)
        machine.recordFailure(at: 0)  // 5 of the last 10
        #expect(machine.state == .open(until: 30))
    }

    @Test func openRefusesUntilTheCoolDownEnds() {
        var machine = Self.opened()
        #expect(machine.permission(at: 0) == .refused(retryAfter: 30))
        #expect(machine.permission(at: 29.999) == .refused(retryAfter: 30 - 29.999))
        #expect(machine.permission(at: 30) == .probe)
        #expect(machine.state == .halfOpen)
    }

    @Test func halfOpenAllowsASingleProbe() {
        var machine = Self.opened()
        #expect(machine.permission(at: 30) == .probe)
        #expect(machine.permission(at: 30) == .refused(retryAfter: 0))
        #expect(machine.permission(at: 31) == .refused(retryAfter: 0))
    }

    @Test func probeSuccessClosesWithACleanWindow() {
        var machine = Self.opened()
        _ = machine.permission(at: 30)
        machine.recordSuccess(at: 31)
        #expect(machine.state == .closed)
        #expect(machine.failureRate == 0)
        #expect(machine.permission(at: 31) == .allowed)
        // A fresh window: three failures are below the minimum count again.
        for _ in 0..<3 { machine.recordFailure(at: 32) }
        #expect(machine.state == .closed)
    }

    @Test func probeFailureReopensForAnotherCoolDown() {
        var machine = Self.opened()
        _ = machine.permission(at: 30)
        machine.recordFailure(at: 35)
        #expect(machine.state == .open(until: 65))
        #expect(machine.openCount == 2)
        #expect(machine.permission(at: 64) == .refused(retryAfter: 1))
    }

    @Test func outcomesWhileOpenAreIgnored() {
        var machine = Self.opened()
        machine.recordSuccess(at: 1)
        machine.recordFailure(at: 2)
        #expect(machine.state == .open(until: 30))
        #expect(machine.openCount == 1)
    }

    @Test func rapidStreamResetsOpenTheBreaker() {
        var machine = Machine(configuration: Self.configuration())
        for i in 0..<4 { machine.recordStreamReset(at: Double(i) * 0.1) }
        #expect(machine.state == .closed)
        machine.recordStreamReset(at: 0.5)
        #expect(machine.state == .open(until: 30.5))
    }

    @Test func spreadOutResetsDoNotOpenIt() {
        var machine = Machine(configuration: Self.configuration())
        for i in 0..<20 { machine.recordStreamReset(at: Double(i) * 1.0) }  // 1 per second, window 2 s
        #expect(machine.state == .closed)
        #expect(machine.recentResetCount <= 3)
    }

    @Test func rapidResetsDuringTheProbeReopen() {
        var machine = Self.opened()
        _ = machine.permission(at: 30)
        for i in 0..<5 { machine.recordStreamReset(at: 30 + Double(i) * 0.1) }
        #expect(machine.state == .open(until: 30.4 + 30))
    }

    @Test func breakerUsesTheInjectedClock() throws {
        let clock = ManualClock()
        let breaker = UploadCircuitBreaker(configuration: Self.configuration(), clock: clock)
        #expect(try breaker.acquire() == false)
        for _ in 0..<4 { breaker.recordFailure() }
        #expect(throws: SchedulingError.self) { try breaker.acquire() }
        do {
            _ = try breaker.acquire()
        } catch {
            #expect(error.code == .circuitOpen)
        }
        clock.advance(by: .seconds(30))
        #expect(try breaker.acquire() == true)
        breaker.recordSuccess()
        #expect(breaker.state == .closed)
    }
}
