import AetherIO
import Testing

@testable import AetherUploader

/// `--max-rate`: parts reserve their bytes on one timeline and wait for their slot.
@Suite struct RatePacerTests {
    @Test func partsAreSpacedSoThatTheAverageRateIsTheCap() throws {
        let pacer = try RatePacer(bytesPerSecond: 1_000_000)
        // Three parts of 500 kB asked for at once: the first goes now, the others 0.5 s and 1 s later.
        #expect(pacer.reserve(500_000, now: 10) == 0)
        #expect(pacer.reserve(500_000, now: 10) == 0.5)
        #expect(pacer.reserve(500_000, now: 10) == 1.0)
        // Later, once the timeline has passed, a part goes at once again (no credit is saved up beyond now).
        #expect(pacer.reserve(250_000, now: 20) == 0)
        #expect(abs(pacer.reserve(250_000, now: 20.1) - 0.15) < 1e-9)
    }

    @Test func aCapBelowOneByteASecondIsATypedError() {
        #expect(throws: UploaderError.self) { try RatePacer(bytesPerSecond: 0) }
        var configuration = UploadConfiguration()
        configuration.maximumBytesPerSecond = 0
        #expect(throws: UploaderError.self) { try configuration.validate() }
    }
}

/// What the bandwidth predictor is fed: the link's rate, not one stream's.
@Suite struct AcknowledgementWindowTests {
    @Test func staggeredStreamsMeasureTheLinkNotOneStream() {
        // Four streams of 1 MB requests taking 1 s each, acknowledged 0.25 s apart: 4 MB a second.
        var window = AcknowledgementWindow()
        for k in 0..<12 { window.record(bytes: 1_000_000, at: 10 + 0.25 * Double(k)) }
        let sample = window.sample(now: 12.75, window: 1)
        #expect(sample.bytes == 4_000_000 && sample.seconds == 1)
    }

    /// Issue 25's lab run: a 4 MiB run that took 7.7 s was acknowledged 0.17 s after a 1 MiB request, and the time
    /// since the previous acknowledgement made it a 197 Mbit/s sample of an 8 Mbit/s uplink.
    @Test func acknowledgementsThatEndTogetherAreNotAFastLink() {
        var window = AcknowledgementWindow()
        window.record(bytes: 2 << 20, at: 8.6)
        window.record(bytes: 1 << 20, at: 12.548)
        window.record(bytes: 4 << 20, at: 12.718)
        let sample = window.sample(now: 12.718, window: 7.694)
        let megabits = Double(sample.bytes) * 8 / sample.seconds / 1e6
        #expect(megabits > 7 && megabits < 8, "\(megabits) Mbit/s")
        // Two requests of 2 s ending 10 ms apart: 2 s of the link, not 10 ms.
        var together = AcknowledgementWindow()
        together.record(bytes: 1_000_000, at: 10)
        together.record(bytes: 1_000_000, at: 10.01)
        #expect(together.sample(now: 10.01, window: 2) == (2_000_000, 2))
    }

    @Test func anIdleGapIsOutsideTheWindowAndOldEntriesGo() {
        var window = AcknowledgementWindow()
        window.record(bytes: 5_000_000, at: 10)
        window.record(bytes: 1_000_000, at: 30)
        #expect(window.sample(now: 30, window: 1) == (1_000_000, 1))
        #expect(window.sample(now: 30, window: 0) == (0, 0))
        #expect(window.sample(now: 30, window: -1) == (0, 0))
        #expect(window.sample(now: 30, window: .infinity) == (0, 0))
        window.record(bytes: 1, at: 30 + AcknowledgementWindow.horizon + 1)
        #expect(window.sample(now: 400, window: 400) == (1, 400))
        var full = AcknowledgementWindow()
        for k in 0..<(AcknowledgementWindow.capacity + 10) { full.record(bytes: 1, at: Double(k) * 0.001) }
        #expect(full.sample(now: 100, window: 200).bytes == Int64(AcknowledgementWindow.capacity))
    }
}
