import AetherIO
import AetherIntegrity
import AetherReceiver
import Foundation
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// `ChunkedUploader`'s Byzantine spot checks through `ByzantineVerifier` against the real receiver: an honest one
/// passes and is listed, and one without the bytes (forged answers, chunks never stored, bytes damaged on disk after
/// the acknowledgement) fails the upload with `.verificationFailed` before the completion; one that does not speak
/// version 2 is not checked and nothing is claimed.
@Suite(.serialized) struct ChunkedUploaderSpotCheckTests {
    // 150,000 bytes in 16 KiB chunks: 10 chunks, so the spec's sample is max(ceil(log2 10), ceil(sqrt(1))) = 4.
    static let size = 150_000

    @Test func anHonestReceiverProvesEverySampledChunkAndTheCheckIsListed() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 41)
        let fixture = try NativeUploadFixture(bytes: content)
        let outcome = try await fixture.uploader(try await fixture.backend()).run { _ in }
        let report = try #require(outcome.spotChecks)
        #expect(report.passed && report.version == 2 && report.notMade == nil)
        #expect(report.sampled == ByzantineSampler.sampleCount(chunkCount: 10) && report.sampled == 4)
        #expect(report.verified == 4 && report.strikes == 0)
        let checked = fixture.wire.snapshot.spotChecks.flatMap { $0 }
        #expect(checked.count == 4 && Set(checked).count == 4)
        // Whole chunks: each sampled chunk's bytes, the short last one included when drawn.
        let expectedBytes = checked.reduce(Int64(0)) { $0 + Int64($1 == 9 ? Self.size - 9 * 16384 : 16384) }
        #expect(report.bytesChecked == expectedBytes)
        #expect(outcome.serverVerified == ["byzantine-sample", "sha256", "merkle-root", "chain-head"])
        #expect(try fixture.object(at: outcome.receipt.location) == content)
    }

    @Test func forgedAnswersOfTheRightShapeFailTheUploadBeforeItIsCompleted() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 42)
        let fixture = try NativeUploadFixture(bytes: content)
        var backend = try await fixture.backend()
        backend.forgesSpotChecks = true
        let error = await #expect(throws: UploaderError.self) { _ = try await fixture.uploader(backend).run { _ in } }
        #expect(error?.code == .verificationFailed)
        #expect(error?.message.contains("not the MAC of the bytes sent") == true, "\(String(describing: error))")
        // One round, never retried, and nothing completed.
        #expect(fixture.wire.snapshot.spotChecks.count == 1)
        #expect(try Self.completedObjects(fixture).isEmpty)
    }

    @Test func chunksAcknowledgedButNeverStoredFailTheSpotCheck() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 43)
        let fixture = try NativeUploadFixture(bytes: content)
        let backend = try await fixture.backend(withholding: Set(0..<10))
        let error = await #expect(throws: UploaderError.self) { _ = try await fixture.uploader(backend).run { _ in } }
        #expect(error?.code == .verificationFailed)
        #expect(error?.message.contains("no longer lists chunk") == true, "\(String(describing: error))")
    }

    /// The receiver stored and acknowledged every chunk, then its stored bytes were damaged (one byte of every
    /// chunk flipped in its stream file): the recorded hashes still look right, the MACs over the bytes do not.
    @Test func bytesDamagedOnDiskAfterTheAcknowledgementFailTheSpotCheck() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 44)
        let fixture = try NativeUploadFixture(bytes: content)
        var backend = try await fixture.backend()
        let store = fixture.store
        backend.onStatus = { upload in
            guard let last = upload.location.split(separator: "/").last, let id = try? UploadID(last),
                let path = try? DirectoryBlobStore(root: store).path(of: .stream(id)).description,
                let handle = FileHandle(forUpdatingAtPath: path)
            else { return }
            defer { try? handle.close() }
            for chunk in 0..<10 {
                try? handle.seek(toOffset: UInt64(chunk * 16384 + 100))
                let byte = (try? handle.read(upToCount: 1)) ?? Data([0])
                try? handle.seek(toOffset: UInt64(chunk * 16384 + 100))
                try? handle.write(contentsOf: Data([byte.first.map { $0 ^ 0xFF } ?? 0xFF]))
            }
        }
        let error = await #expect(throws: UploaderError.self) { _ = try await fixture.uploader(backend).run { _ in } }
        #expect(error?.code == .verificationFailed)
        #expect(error?.message.contains("not the MAC of the bytes sent") == true, "\(String(describing: error))")
    }

    @Test func aReceiverWithoutSpotChecksOfVersion2IsNotCheckedAndNothingIsClaimed() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 45)
        let fixture = try NativeUploadFixture(bytes: content)
        let watched = try await fixture.backend()
        var old = watched.inner.server
        old.challengeVersion = nil
        old.maximumChallengeBytes = nil
        let client = fixture.client
        let inner = try NativeBackend(
            creationURL: watched.inner.creationURL, server: old, options: watched.inner.options,
            transport: { (request) async throws(TransportError) -> HTTPResponse in try await client.send(request) })
        let backend = WatchedNativeBackend(inner: inner, wire: fixture.wire, withhold: [])
        let outcome = try await fixture.uploader(backend).run { _ in }
        let report = try #require(outcome.spotChecks)
        #expect(!report.passed && report.version == nil)
        #expect(report.notMade?.contains("version 2") == true)
        #expect(fixture.wire.snapshot.spotChecks.isEmpty)
        #expect(!outcome.serverVerified.contains("byzantine-sample"))
        #expect(outcome.serverVerified == ["sha256", "merkle-root", "chain-head"])
        // With the flag off: not made either, and said so.
        var flags = FeatureFlags.defaults
        flags.byzantineSampling = false
        flags.dedup = false
        let off = try await fixture.uploader(try await fixture.backend(), flags: flags).run { _ in }
        #expect(off.spotChecks?.notMade == "byzantine-sampling is switched off")
        #expect(!off.serverVerified.contains("byzantine-sample"))
    }

    /// A receiver advertising spot checks of version 2 with a `challenge-bytes` under 4 KiB would be checked over a
    /// range of that many bytes: with 1, one byte of one chunk, whose MAC a receiver without the bytes guesses one
    /// time in 256, and `byzantine-sample` was then listed. It is not checked, and nothing is claimed.
    @Test func aReceiverWhoseChallengeBudgetIsTooSmallToProveAnythingIsNotChecked() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 46)
        let fixture = try NativeUploadFixture(bytes: content)
        let watched = try await fixture.backend()
        var tiny = watched.inner.server
        tiny.maximumChallengeBytes = 1
        let client = fixture.client
        let inner = try NativeBackend(
            creationURL: watched.inner.creationURL, server: tiny, options: watched.inner.options,
            transport: { (request) async throws(TransportError) -> HTTPResponse in try await client.send(request) })
        let backend = WatchedNativeBackend(inner: inner, wire: fixture.wire, withhold: [])
        let outcome = try await fixture.uploader(backend).run { _ in }
        let report = try #require(outcome.spotChecks)
        #expect(!report.passed)
        #expect(report.notMade?.contains("challenge-bytes (1)") == true, "\(report)")
        #expect(fixture.wire.snapshot.spotChecks.isEmpty)
        #expect(outcome.serverVerified == ["sha256", "merkle-root", "chain-head"])
        // A budget of one chunk (16 KiB) is checked as before, whole chunks.
        let chunk = try NativeUploadFixture(bytes: content)
        let chunkWatched = try await chunk.backend()
        var oneChunk = chunkWatched.inner.server
        oneChunk.maximumChallengeBytes = 16384
        let chunkClient = chunk.client
        let chunkInner = try NativeBackend(
            creationURL: chunkWatched.inner.creationURL, server: oneChunk, options: chunkWatched.inner.options,
            transport: { (request) async throws(TransportError) -> HTTPResponse in try await chunkClient.send(request) }
        )
        let checked = try await chunk.uploader(WatchedNativeBackend(inner: chunkInner, wire: chunk.wire, withhold: []))
            .run { _ in }
        #expect(checked.spotChecks?.passed == true)
        #expect(checked.serverVerified.first == "byzantine-sample")
    }

    @Test func roundsTakeWholeChunksWithinTheBudgetElseARandomRangeOfTheirShare() throws {
        // 64 KiB for 16 KiB chunks: four whole chunks a round.
        let whole = try ChunkedUploader.spotCheckItems([1, 4, 6, 9], partSize: 16384, size: 150_000, budget: 65536)
        #expect(whole.map(\.index) == [1, 4, 6, 9])
        #expect(whole.map(\.length) == [16384, 16384, 16384, 150_000 - 9 * 16384])
        #expect(whole.allSatisfy { $0.offset == 0 })
        // Less than a chunk: one chunk a round, a range of the budget inside it.
        for _ in 0..<50 {
            let range = try ChunkedUploader.spotCheckItems([2, 3], partSize: 16384, size: 150_000, budget: 1000)
            #expect(range.count == 1 && range[0].index == 2 && range[0].length == 1000)
            #expect(range[0].offset >= 0 && range[0].offset + 1000 <= 16384)
        }
        // Never more than 64 chunks, whatever the budget; the client also caps a round at 16 MiB.
        let many = try ChunkedUploader.spotCheckItems(
            Array(0..<100), partSize: 16384, size: 100 * 16384, budget: 999_999_999_999_999)
        #expect(many.count == 64)
        #expect(ChunkedUploader.spotCheckRoundBytes == 16 << 20)
    }

    /// The objects the receiver completed (its `objects` directory).
    static func completedObjects(_ fixture: NativeUploadFixture) throws -> [String] {
        let objects = fixture.store.description + "/objects"
        guard FileManager.default.fileExists(atPath: objects) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: objects)
    }
}
