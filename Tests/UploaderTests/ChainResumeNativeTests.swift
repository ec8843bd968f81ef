import AetherIO
import AetherReceiver
import FoundationEssentials
import Synchronization
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// Resume level 3 against the real receiver: `aether serve` reports the commitment-chain link of the prefix whose
/// links it checked (`chainLink` in the status document), and a resumed upload compares it with the chain over its
/// own snapshot before it trusts the stored prefix.
@Suite(.serialized) struct ChainResumeNativeTests {
    /// Spot checks and parity off: the withheld chunk is simply missing at the completion, so the first run fails
    /// with chunks 0-8 stored and acknowledged in the snapshot.
    static var flags: FeatureFlags {
        var flags = FeatureFlags.defaults
        flags.byzantineSampling = false
        flags.parity = false
        return flags
    }

    /// A first run that stores chunks 0-8 of 10 and fails at the completion (chunk 9 is withheld).
    static func interruptedUpload(_ fixture: NativeUploadFixture) async throws {
        let first = try await fixture.backend(withholding: [9])
        await #expect(throws: UploaderError.self) {
            _ = try await fixture.uploader(first, flags: flags).run { _ in }
        }
    }

    /// The second run's resume report, its outcome and the chunks it sent.
    static func resumedUpload(_ fixture: NativeUploadFixture) async throws -> (
        report: ResumeReport, outcome: UploadOutcome, sent: [Int]
    ) {
        let before = fixture.wire.snapshot.chunks.count
        let reports = Mutex<[ResumeReport]>([])
        let outcome = try await fixture.uploader(try await fixture.backend(), flags: flags).run { event in
            if case .resume(let report) = event { reports.withLock { $0.append(report) } }
        }
        let report = try #require(reports.withLock { $0.first })
        return (report, outcome, Array(fixture.wire.snapshot.chunks.dropFirst(before)))
    }

    @Test func theReceiversChainOverTheStoredPrefixMatchesAndTheResumeIsVerifiedAtLevelThree() async throws {
        let content = UploadFixture.seeded(ChunkedUploaderNativeTests.size, seed: 31)
        let fixture = try NativeUploadFixture(bytes: content)
        try await Self.interruptedUpload(fixture)
        let open = try fixture.server.engine.catalog.uploads(in: [.open])
        #expect(open.count == 1)
        #expect(open.first?.chainVerifiedThrough == 8)
        let (report, outcome, sent) = try await Self.resumedUpload(fixture)
        #expect(report.level == .chain, "\(report)")
        #expect(report.reusedParts == 9)
        #expect(sent == [9])
        #expect(try fixture.object(at: outcome.receipt.location) == content)
    }

    /// The receiver's recorded chain for the stored prefix is not the one this client built (a catalogue restored
    /// from another upload, or a receiver that lies about what it holds): level 3 refuses the prefix, the upload starts
    /// fresh, every chunk is sent again, and the object is byte-identical.
    @Test func aReceiverWhoseChainOverTheStoredPrefixWasTamperedWithIsCaughtAndEveryChunkIsSentAgain() async throws {
        let content = UploadFixture.seeded(ChunkedUploaderNativeTests.size, seed: 32)
        let fixture = try NativeUploadFixture(bytes: content)
        try await Self.interruptedUpload(fixture)
        let catalog = fixture.server.engine.catalog
        var record = try #require(try catalog.uploads(in: [.open]).first)
        #expect(record.chainLink != nil)
        record.chainLink = SHA256.hash(Array("not the client's chain".utf8))
        try catalog.update(record, event: "test-tampered")
        let (report, outcome, sent) = try await Self.resumedUpload(fixture)
        #expect(report.level == ResumeLevel.none, "\(report)")
        #expect(report.reason?.contains("level 3") == true, "\(report)")
        #expect(Set(sent) == Set(0..<10))
        #expect(try fixture.object(at: outcome.receipt.location) == content)
    }
}
