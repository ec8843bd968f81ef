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
@Suite struct LinkShareTests {
    @Test func partsInFlightShareTheLinkSoEachStandsForTheTimeSinceThePreviousAck() {
        // Four parts of 1 s each in flight, acknowledged 0.25 s apart: each stands for 0.25 s of the link.
        #expect(ChunkedUploader.linkShare(partSeconds: 1, now: 10.25, previousAcknowledgement: 10, streams: 4) == 0.25)
        // The first acknowledgement, or one after an idle gap, stands for the part's own send time.
        #expect(ChunkedUploader.linkShare(partSeconds: 1, now: 10, previousAcknowledgement: nil, streams: 4) == 1)
        #expect(ChunkedUploader.linkShare(partSeconds: 1, now: 30, previousAcknowledgement: 10, streams: 4) == 1)
    }

    /// Issue 25's lab run: two 2 MiB runs sent together ended 10 ms apart, the second stood for 10 ms of the link
    /// (1.7 Gbit/s), and one decision of 8 streams x 11 MiB put 55 MiB in flight on an 8 Mbit/s uplink.
    @Test func acknowledgementsThatBunchStandForNoLessThanTheirShareOfTheLink() {
        #expect(ChunkedUploader.linkShare(partSeconds: 2, now: 10.01, previousAcknowledgement: 10, streams: 2) == 1)
        #expect(ChunkedUploader.linkShare(partSeconds: 2, now: 10, previousAcknowledgement: 10, streams: 4) == 0.5)
        // Alone on the link, a part stands for its whole send time however soon after another it ends.
        #expect(ChunkedUploader.linkShare(partSeconds: 2, now: 10.01, previousAcknowledgement: 10, streams: 1) == 2)
        // A clock reading before the previous acknowledgement still gives the share, never zero or less.
        #expect(ChunkedUploader.linkShare(partSeconds: 1, now: 9, previousAcknowledgement: 10, streams: 4) == 0.25)
        #expect(ChunkedUploader.linkShare(partSeconds: 1, now: 10, previousAcknowledgement: 9.9, streams: 0) == 1)
    }
}
