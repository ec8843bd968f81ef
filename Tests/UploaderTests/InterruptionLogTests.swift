import AetherTransport
import Testing

@testable import AetherUploader

@Suite struct InterruptionLogTests {
    @Test func noInterruptionMeansNoInterval() {
        let log = InterruptionLog()
        #expect(log.meanInterval(at: 100) == nil)
        // The destination's own answers are not interruptions of the path.
        for code in [TransportError.Code.serverFailed, .throttled, .checksumMismatch, .remoteRejected] {
            log.note(code, at: 10)
        }
        #expect(log.meanInterval(at: 100) == nil)
    }

    @Test func resetsEveryTwentySecondsGiveTwenty() {
        let log = InterruptionLog()
        for t in stride(from: 20.0, through: 120, by: 20) {
            log.note(.connectionClosed, at: t)
        }
        #expect(log.meanInterval(at: 120) == 20)
    }

    @Test func aBurstOfFailuresIsOneInterruption() {
        // A reset cuts every request in flight at once, and their retries are refused while the link is down: one
        // interruption, however long the burst (each failure within the gap of the one before).
        let log = InterruptionLog()
        for t in [30.0, 30.01, 30.02, 30.5, 31.4, 32.9, 34.5] {
            log.note([.connectionClosed, .connectionRefused, .timedOut][Int(t * 100) % 3], at: t)
        }
        #expect(log.meanInterval(at: 60) == 60)
        log.note(.notConnected, at: 40)
        #expect(log.meanInterval(at: 60) == 30)
    }

    @Test func aLinkThatSettlesStopsCountingAsInterrupted() {
        let log = InterruptionLog(burstGap: 2, window: 300)
        log.note(.connectionClosed, at: 10)
        log.note(.connectionClosed, at: 50)
        #expect(log.meanInterval(at: 100) == 50)
        // Measured over the last 300 s: by 310 only the reset at 50 is in the window.
        #expect(log.meanInterval(at: 320) == 300)
        #expect(log.meanInterval(at: 400) == nil)
    }
}
