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
        #expect(ChunkedUploader.linkShare(partSeconds: 1, now: 10.25, previousAcknowledgement: 10) == 0.25)
        // The first acknowledgement, or one after an idle gap, stands for the part's own send time.
        #expect(ChunkedUploader.linkShare(partSeconds: 1, now: 10, previousAcknowledgement: nil) == 1)
        #expect(ChunkedUploader.linkShare(partSeconds: 1, now: 30, previousAcknowledgement: 10) == 1)
        #expect(ChunkedUploader.linkShare(partSeconds: 1, now: 9, previousAcknowledgement: 10) == 0)
    }
}
