import AetherIO
import AetherScheduling
import AetherTransport
import FoundationEssentials
import Synchronization
import Testing

@testable import AetherUploader

/// A temporary directory with a file to upload and a state directory; removed by `clean()`.
struct UploadFixture {
    let directory: String
    let file: String
    let stateDirectory: String

    init(bytes: [UInt8]) throws {
        directory =
            FileManager.default.temporaryDirectory.path + "/aether-uploader-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        file = directory + "/input.bin"
        stateDirectory = directory + "/state"
        try write(bytes)
    }

    func write(_ bytes: [UInt8]) throws {
        try AtomicFile.write(bytes, to: file)
    }

    func store() throws -> VaultSnapshotStore {
        try VaultSnapshotStore(stateDirectory: UploadStateDirectory(path: FilePath(stateDirectory)))
    }

    var key: String { SnapshotKey.derive(canonicalPath: FilePath(file), destination: "memory://dest") }

    func uploader(
        _ backend: InMemoryBackend, chunkSize: Int = 64 << 10, parallel: Int? = 4, breaker: UploadCircuitBreaker? = nil
    ) throws -> ChunkedUploader {
        ChunkedUploader(
            target: .init(file: FilePath(file), destination: "memory://dest", mode: .native),
            backend: backend, snapshots: try store(), snapshotKey: key,
            configuration: UploadConfiguration(
                chunkSize: chunkSize, parallel: parallel, initialBackoff: 0.001, maximumBackoff: 0.004),
            breaker: breaker ?? UploadCircuitBreaker(configuration: Self.lenientBreaker))
    }

    static var lenientBreaker: CircuitBreakerStateMachine.Configuration {
        var configuration = CircuitBreakerStateMachine.Configuration()
        configuration.minimumRequests = 1000
        return configuration
    }

    func clean() { try? FileManager.default.removeItem(atPath: directory) }

    static func seeded(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }
}

/// Collects events in order.
final class EventLog: Sendable {
    let events = Mutex<[UploadEvent]>([])
    func record(_ event: UploadEvent) { events.withLock { $0.append(event) } }
    var resume: ResumeReport? {
        events.withLock { events in
            for case .resume(let report) in events { return report }
            return nil
        }
    }
    var retries: [RetryReport] {
        events.withLock { events in events.compactMap { if case .retry(let r) = $0 { r } else { nil } } }
    }
    var acknowledged: [Int] {
        events.withLock { events in
            events.compactMap { if case .chunkAcknowledged(let r) = $0 { r.index } else { nil } }
        }
    }
}

/// The task of a running upload, for a backend hook to cancel.
final class TaskHolder: Sendable {
    let task = Mutex<Task<UploadOutcome, any Error>?>(nil)
    func cancel() { task.withLock { $0?.cancel() } }
}

/// Runs `uploader` until it ends (the backend hook cancels it through `holder`); returns the thrown error.
func runUntilCancelled(_ uploader: ChunkedUploader, holder: TaskHolder) async -> (any Error)? {
    let task = Task { try await uploader.run { _ in } }
    holder.task.withLock { $0 = task }
    do {
        _ = try await task.value
        return nil
    } catch {
        return error
    }
}

@Suite struct ChunkedUploaderTests {
    @Test func uploadCompletesByteIdenticalDespiteFailuresAndReordering() async throws {
        let content = UploadFixture.seeded(1_000_003, seed: 1)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let backend = InMemoryBackend()
        backend.state.withLock {
            $0.failures = [.connectionClosed, .serverFailed, .timedOut]
            $0.dropAcknowledgement = [3, 7]
        }
        let log = EventLog()
        let uploader = try fixture.uploader(backend)
        let outcome = try await uploader.run { log.record($0) }
        #expect(backend.object(outcome.receipt.location) == content)
        #expect(outcome.partCount == 16)
        #expect(outcome.sha256 == SHA256.hash(content))
        #expect(outcome.serverVerified == ["sha256", "merkle-root", "chain-head"])
        #expect(log.retries.count == 5)
        #expect(log.retries.map(\.cause.code).contains(.connectionClosed))
        // The reset and the timeout, moments apart, are one interruption of the path, which the scheduler now hears.
        #expect(uploader.interruptions.meanInterval() != nil)
        #expect(Set(log.acknowledged) == Set(0..<16))
        #expect(log.resume?.level == ResumeLevel.none)
        // Completion removes the snapshot.
        #expect(try fixture.store().load(key: fixture.key) == nil)
        guard case .completed = log.events.withLock({ $0.last }) else {
            Issue.record("the last event is not .completed")
            return
        }
    }

    /// Attempts refused before anything was sent (a receiver restarting) are not counted in the bytes sent; an
    /// attempt cut after it started counts whole (the figure is an upper bound of what crossed the link).
    @Test func refusedAttemptsAreNotCountedAsBytesSent() async throws {
        let content = UploadFixture.seeded(1_000_003, seed: 3)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let backend = InMemoryBackend()
        backend.state.withLock { $0.failures = [.connectionRefused, .connectionRefused, .connectionRefused] }
        let outcome = try await fixture.uploader(backend).run { _ in }
        #expect(backend.object(outcome.receipt.location) == content)
        #expect(backend.state.withLock { $0.sends.count } == outcome.partCount + 3)
        #expect(outcome.bytesSent == Int64(content.count))

        let cut = try UploadFixture(bytes: content)
        defer { cut.clean() }
        let resetting = InMemoryBackend()
        resetting.state.withLock { $0.failures = [.connectionClosed] }
        let again = try await cut.uploader(resetting).run { _ in }
        #expect(again.bytesSent > Int64(content.count))
    }

    @Test func anEmptyFileUploadsAsOneEmptyPart() async throws {
        let fixture = try UploadFixture(bytes: [])
        defer { fixture.clean() }
        let backend = InMemoryBackend()
        let outcome = try await fixture.uploader(backend).run { _ in }
        #expect(backend.object(outcome.receipt.location) == [])
        #expect(outcome.partCount == 1)
    }

    /// How many parts the stored snapshot holds as acknowledged. A cancel that lands while the last stored part's
    /// answer is on its way leaves that part stored but unacknowledged (one fewer here than the backend holds): the
    /// resume then sends it again (level 2), never reuses a part whose digest it did not record.
    static func acknowledgedInSnapshot(_ fixture: UploadFixture) throws -> Int {
        let bytes = try #require(try fixture.store().load(key: fixture.key))
        return try ResumeSnapshot.deserialize(bytes).acknowledged.count
    }

    /// A resume sends only the parts the snapshot does not hold as acknowledged, at level 3. With failures given,
    /// the resume query first meets them (a reset, then a refused connection: the receiver restarting): it is asked
    /// again, and the upload still resumes where it was instead of abandoning the stored parts and starting fresh.
    @Test(arguments: [[], [TransportError.Code.connectionClosed, .connectionRefused]])
    func resumeAfterCancelSendsOnlyTheUnacknowledgedParts(resumeQueryFailures: [TransportError.Code]) async throws {
        let content = UploadFixture.seeded(40 * 16_384, seed: 2)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let holder = TaskHolder()
        let backend = InMemoryBackend(reorder: false) { stored in
            if stored == 12 { holder.cancel() }
        }
        let error = await runUntilCancelled(
            try fixture.uploader(backend, chunkSize: 16_384, parallel: 1), holder: holder)
        #expect((error as? UploaderError)?.code == .cancelled)
        let storedBefore = backend.state.withLock { $0.uploads.values.first?.parts.count ?? 0 }
        #expect(storedBefore >= 12 && storedBefore < 40)
        let sendsBefore = backend.state.withLock { $0.sends.count }
        let acknowledged = try Self.acknowledgedInSnapshot(fixture)
        #expect(acknowledged == storedBefore || acknowledged == storedBefore - 1)
        backend.state.withLock { $0.progressFailures = resumeQueryFailures }

        let log = EventLog()
        let outcome = try await fixture.uploader(backend, chunkSize: 16_384, parallel: 4).run { log.record($0) }
        let sendsAfter = backend.state.withLock { Array($0.sends[sendsBefore...]) }
        #expect(backend.object(outcome.receipt.location) == content)
        #expect(backend.state.withLock { $0.progressFailures.isEmpty })
        #expect(sendsAfter.count == 40 - acknowledged)
        #expect(Set(sendsAfter).count == sendsAfter.count)
        #expect(outcome.partsSent == 40 - acknowledged)
        #expect(log.resume?.reusedParts == acknowledged)
        #expect(log.resume?.level == (acknowledged == storedBefore ? .chain : .server))
        #expect(backend.state.withLock { $0.created } == 1)
    }

    @Test func aFileChangedBetweenRunsFailsLevelOneAndNeverStoresAMix() async throws {
        let content = UploadFixture.seeded(30 * 16_384, seed: 3)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let holder = TaskHolder()
        let backend = InMemoryBackend(reorder: false) { stored in
            if stored == 10 { holder.cancel() }
        }
        _ = await runUntilCancelled(try fixture.uploader(backend, chunkSize: 16_384, parallel: 1), holder: holder)
        var changed = content
        for index in stride(from: 0, to: changed.count, by: 4096) { changed[index] ^= 0xFF }
        try fixture.write(changed)

        let log = EventLog()
        let outcome = try await fixture.uploader(backend, chunkSize: 16_384).run { log.record($0) }
        #expect(log.resume?.level == ResumeLevel.none)
        #expect(log.resume?.reason?.contains("level 1") == true)
        #expect(backend.object(outcome.receipt.location) == changed)
        #expect(backend.state.withLock { $0.created } == 2)
        #expect(backend.state.withLock { $0.aborted.count } == 1)
        #expect(outcome.partsSent == 30)
    }

    @Test func aDamagedSnapshotIsReportedAndTheUploadRestartsSafely() async throws {
        let content = UploadFixture.seeded(20 * 16_384, seed: 4)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let holder = TaskHolder()
        let backend = InMemoryBackend(reorder: false) { stored in
            if stored == 5 { holder.cancel() }
        }
        _ = await runUntilCancelled(try fixture.uploader(backend, chunkSize: 16_384, parallel: 1), holder: holder)
        let path = try fixture.store().vault.path(for: fixture.key)
        var bytes = try GuardedFile(path: path).readAll(maximumBytes: 1 << 20)
        bytes[bytes.count - 3] ^= 0x01
        try AtomicFile.write(bytes, to: path, options: .secret)
        #expect { try fixture.store().load(key: fixture.key) } throws: {
            ($0 as? UploaderError)?.code == .snapshotDamaged
        }

        let log = EventLog()
        let outcome = try await fixture.uploader(backend, chunkSize: 16_384).run { log.record($0) }
        #expect(log.resume?.level == ResumeLevel.none)
        #expect(log.resume?.reason?.contains("damaged") == true)
        #expect(backend.object(outcome.receipt.location) == content)
        #expect(outcome.partsSent == 20)
    }

    @Test func aLyingReceiptIsVerificationFailed() async throws {
        let fixture = try UploadFixture(bytes: UploadFixture.seeded(100_000, seed: 5))
        defer { fixture.clean() }
        let backend = InMemoryBackend()
        backend.state.withLock { $0.lieInReceipt = true }
        await #expect {
            _ = try await fixture.uploader(backend).run { _ in }
        } throws: { ($0 as? UploaderError)?.code == .verificationFailed }
        // The snapshot stays: the user decides what to do with the destination.
        #expect(try fixture.store().load(key: fixture.key) != nil)
    }

    @Test func aChainHeadThatDoesNotMatchFailsLevelThreeAndStartsFresh() async throws {
        let content = UploadFixture.seeded(20 * 16_384, seed: 6)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let holder = TaskHolder()
        let backend = InMemoryBackend(reorder: false) { stored in
            if stored == 6 { holder.cancel() }
        }
        _ = await runUntilCancelled(try fixture.uploader(backend, chunkSize: 16_384, parallel: 1), holder: holder)
        backend.state.withLock { $0.lieInChain = true }
        let log = EventLog()
        let outcome = try await fixture.uploader(backend, chunkSize: 16_384).run { log.record($0) }
        #expect(log.resume?.level == ResumeLevel.none)
        #expect(log.resume?.reason?.contains("level 3") == true)
        #expect(backend.object(outcome.receipt.location) == content)
        #expect(outcome.partsSent == 20)
    }

    @Test func aNonRetryableFailureIsATypedErrorAfterOneAttempt() async throws {
        let fixture = try UploadFixture(bytes: UploadFixture.seeded(50_000, seed: 7))
        defer { fixture.clean() }
        let backend = InMemoryBackend()
        backend.state.withLock { $0.failures = [.accessDenied] }
        await #expect {
            _ = try await fixture.uploader(backend, parallel: 1).run { _ in }
        } throws: { ($0 as? UploaderError)?.code == .transportFailed }
        #expect(backend.state.withLock { $0.sends.count } == 1)
    }

    @Test func resetsAndRefusalsAreRetriedPastTheAttemptLimitWithoutOpeningTheBreakerButServerFailuresOpenIt()
        async throws
    {
        var strict = CircuitBreakerStateMachine.Configuration()
        strict.minimumRequests = 2
        for (code, opens) in [
            (TransportError.Code.connectionClosed, false), (.connectionRefused, false), (.serverFailed, true),
        ] {
            let fixture = try UploadFixture(bytes: UploadFixture.seeded(10_000, seed: 9))
            defer { fixture.clean() }
            let backend = InMemoryBackend()
            // Twelve failures in a row: more than the eight attempts a part has for failures of the destination.
            backend.state.withLock { $0.failures = Array(repeating: code, count: 12) }
            var configuration = UploadConfiguration(
                chunkSize: 64 << 10, parallel: 1, initialBackoff: 0.001, maximumBackoff: 0.004)
            configuration.circuitWaitLimit = 0.5
            configuration.connectionBackoffLimit = 0.004
            let uploader = ChunkedUploader(
                target: .init(file: FilePath(fixture.file), destination: "memory://dest", mode: .native),
                backend: backend, snapshots: try fixture.store(), snapshotKey: fixture.key,
                configuration: configuration, breaker: UploadCircuitBreaker(configuration: strict))
            let log = EventLog()
            if opens {
                await #expect {
                    _ = try await uploader.run { log.record($0) }
                } throws: { ($0 as? UploaderError)?.code == .circuitOpen }
            } else {
                let outcome = try await uploader.run { log.record($0) }
                #expect(outcome.partCount == 1)
                #expect(backend.state.withLock { $0.sends.count } == 13)
                #expect(log.retries.map(\.attempt) == Array(2...13))
            }
        }
    }

    @Test func aConnectionRefusedForLongerThanTheWaitLimitFailsWithATypedErrorNamingTheTime() async throws {
        let fixture = try UploadFixture(bytes: UploadFixture.seeded(10_000, seed: 9))
        defer { fixture.clean() }
        let backend = InMemoryBackend()
        backend.state.withLock { $0.failures = Array(repeating: .connectionRefused, count: 100_000) }
        var configuration = UploadConfiguration(chunkSize: 64 << 10, parallel: 1, initialBackoff: 0.01)
        configuration.connectionWaitLimit = 0.3
        configuration.connectionBackoffLimit = 0.05
        let uploader = ChunkedUploader(
            target: .init(file: FilePath(fixture.file), destination: "memory://dest", mode: .native),
            backend: backend, snapshots: try fixture.store(), snapshotKey: fixture.key, configuration: configuration)
        await #expect {
            _ = try await uploader.run { _ in }
        } throws: { error in
            guard let error = error as? UploaderError, error.code == .transportFailed else { return false }
            return error.message.contains("could not reach the destination for ")
                && error.message.contains("connectionRefused")
        }
        let sends = backend.state.withLock { $0.sends.count }
        // About 0.3 s of attempts at most 50 ms apart (more on a busy machine): more than one, far fewer than queued.
        #expect((2...200).contains(sends))
    }

    @Test func retriesStopAtTheConfiguredAttempts() async throws {
        let fixture = try UploadFixture(bytes: UploadFixture.seeded(10_000, seed: 8))
        defer { fixture.clean() }
        let backend = InMemoryBackend()
        backend.state.withLock { $0.failures = Array(repeating: .serverFailed, count: 20) }
        await #expect {
            _ = try await fixture.uploader(backend, parallel: 1).run { _ in }
        } throws: { ($0 as? UploaderError)?.code == .transportFailed }
        #expect(backend.state.withLock { $0.sends.count } == 8)
    }

    @Test func partsInFlightNeverExceedTheParallelism() async throws {
        let content = UploadFixture.seeded(64 * 16_384, seed: 9)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let backend = InMemoryBackend()
        let log = EventLog()
        let outcome = try await fixture.uploader(backend, chunkSize: 16_384, parallel: 3).run { log.record($0) }
        #expect(backend.object(outcome.receipt.location) == content)
        let progress = log.events.withLock { events in
            events.compactMap { if case .progress(let p) = $0 { p } else { nil } }
        }
        for step in progress {
            #expect(step.sentBytes - step.acknowledgedBytes <= 3 * 16_384)
        }
        #expect(progress.last?.acknowledgedBytes == Int64(content.count))
    }

    @Test func everyAttemptCarriesItsOwnIdempotencyKeyAndAResumeNeverReusesOne() async throws {
        let content = UploadFixture.seeded(20 * 16_384, seed: 10)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let holder = TaskHolder()
        let backend = InMemoryBackend(reorder: false) { stored in
            if stored == 8 { holder.cancel() }
        }
        backend.state.withLock { $0.failures = [.connectionClosed, .timedOut] }
        _ = await runUntilCancelled(try fixture.uploader(backend, chunkSize: 16_384, parallel: 1), holder: holder)
        let firstRun = backend.state.withLock { $0.idempotencyKeys.count }
        let outcome = try await fixture.uploader(backend, chunkSize: 16_384).run { _ in }
        #expect(backend.object(outcome.receipt.location) == content)
        let keys = backend.state.withLock { $0.idempotencyKeys }
        #expect(keys.allSatisfy { $0?.count == 64 })
        #expect(Set(keys.compactMap { $0 }).count == keys.count)
        #expect(keys.count > firstRun)
    }

    @Test func theDisplayedShareNeverGoesBackAndEndsAtOne() async throws {
        let content = UploadFixture.seeded(40 * 16_384, seed: 11)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let log = EventLog()
        _ = try await fixture.uploader(InMemoryBackend(), chunkSize: 16_384).run { log.record($0) }
        let shown = log.events.withLock { events in
            events.compactMap { if case .progress(let p) = $0 { p.displayedFraction } else { nil } }
        }
        #expect(shown.count > 10)
        #expect(zip(shown, shown.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(shown.last == 1)
    }

    @Test func withoutAdaptiveChunkingThePartSizeIsTheFixedDefault() async throws {
        let content = UploadFixture.seeded(5 << 20, seed: 12)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        var flags = FeatureFlags.defaults
        flags.set(.adaptiveChunking, false)
        let uploader = ChunkedUploader(
            target: .init(file: FilePath(fixture.file), destination: "memory://dest", mode: .native),
            backend: InMemoryBackend(), snapshots: try fixture.store(), snapshotKey: fixture.key,
            configuration: UploadConfiguration(flags: flags))
        let log = EventLog()
        let outcome = try await uploader.run { log.record($0) }
        #expect(outcome.partCount == 2)
        let tiers = log.events.withLock { events in
            events.compactMap { if case .tierChanged(let t) = $0 { t } else { nil } }
        }
        #expect(Set(tiers.map(\.parallelism)) == [UploadConstants.maxParallelChunkUploads])
        #expect(Set(tiers.map(\.chunkSize)) == [Int64(ChunkReadOptions.defaultChunkSize)])
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080/uploads", true), ("https://localhost/uploads", true), ("HTTP://LOCALHOST:1/x", true),
        ("http://[::1]:9000/uploads", true), ("http://127.3.2.1/", true), ("http://user@127.0.0.1:80/u", true),
        ("http://128.0.0.1/uploads", false), ("http://127.0.0/uploads", false), ("http://127.0.0.256/", false),
        ("http://127.0.0.1.example.org/", false), ("http://localhost.example.org/", false),
        ("http://[::2]/uploads", false), ("s3://bucket/key", false), ("memory://dest", false), ("http://", false),
        ("http://example.org/?h=127.0.0.1", false), ("http://[::1/", false),
    ])
    func loopbackDestinationsAreRecognisedByTheirHostOnly(destination: String, loopback: Bool) {
        #expect(LoopbackDestination.contains(destination) == loopback)
    }

    @Test(
        arguments: [
            ("s3://bucket/key", "http://127.0.0.1:7480", true), ("s3://bucket/key", nil, false),
            ("s3://bucket/key", "https://s3.example.org", false), ("http://127.0.0.1:8080/uploads", nil, true),
        ] as [(String, String?, Bool)])
    func anS3UploadIsOnLoopbackWhenItsEndpointIs(destination: String, endpoint: String?, loopback: Bool) {
        let target = ChunkedUploader.Target(
            file: FilePath("/dev/null"), destination: destination, mode: .s3Multipart, endpoint: endpoint)
        #expect(target.isLoopback == loopback)
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080/uploads", 16 << 20, 8), ("http://uploads.example.org/uploads", 2 << 20, 1),
    ])
    func onLoopbackTheFirstLayoutUsesUltrafastPartsAndParallelism(
        destination: String, partSize: Int, firstParallelism: Int
    ) async throws {
        let content = UploadFixture.seeded(20 << 20, seed: 21)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let backend = InMemoryBackend()
        let uploader = ChunkedUploader(
            target: .init(file: FilePath(fixture.file), destination: destination, mode: .native),
            backend: backend, snapshots: try fixture.store(),
            snapshotKey: SnapshotKey.derive(canonicalPath: FilePath(fixture.file), destination: destination))
        let log = EventLog()
        let outcome = try await uploader.run { log.record($0) }
        #expect(outcome.partCount == ((20 << 20) + partSize - 1) / partSize)
        let first = log.events.withLock { events in
            events.compactMap { if case .tierChanged(let t) = $0 { t } else { nil } }.first
        }
        #expect(first?.chunkSize == Int64(partSize))
        #expect(first?.parallelism == firstParallelism)
        #expect(backend.object(outcome.receipt.location) == content)
    }

    @Test func onLoopbackTheFirstReadsPrefetchUltrafastChunksOnlyWhenMemoryAllowsAndWithinTheBudget() {
        let unmeasured = FusionScheduler().decide(SchedulingContext(totalBytes: 1 << 30))
        #expect(unmeasured.predictedBitsPerSecond == 0)
        let ample = UploadConstants.ultrafastPrefetchMemoryBytes + 1
        func prefetch(loopback: Bool = true, memory: Int64? = ample, chunk: Int = 1 << 20) -> Int {
            ChunkedUploader.firstPrefetch(
                unmeasured, loopback: loopback, availableMemoryBytes: memory, chunkSize: chunk)
        }
        #expect(prefetch() == UploadConstants.ultrafastPrefetchChunkCount)
        #expect(prefetch(memory: UploadConstants.ultrafastPrefetchMemoryBytes) == 0)
        #expect(prefetch(memory: nil) == 0)
        #expect(prefetch(loopback: false) == 0)
        // At most 4 MiB read ahead: one 4 MiB chunk, no 16 MiB one.
        #expect(prefetch(chunk: 4 << 20) == 1)
        #expect(prefetch(chunk: 16 << 20) == 0)
    }

    @Test func aPartThatReadsDifferentlyThanItsSnapshotDigestRestartsFreshAndStoresNoMix() async throws {
        let content = UploadFixture.seeded(24 * 16_384, seed: 13)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let holder = TaskHolder()
        let backend = InMemoryBackend(reorder: false) { stored in
            if stored == 8 { holder.cancel() }
        }
        _ = await runUntilCancelled(try fixture.uploader(backend, chunkSize: 16_384, parallel: 1), holder: holder)
        // The fingerprint still matches, but the snapshot says part 2 had other bytes (as after an in-place edit
        // that kept size, mtime and the first 4 KiB); the destination keeps no chain, so level 3 cannot see it.
        backend.state.withLock { $0.reportsChain = false }
        let store = try fixture.store()
        var snapshot = try ResumeSnapshot.deserialize(try #require(try store.load(key: fixture.key)))
        let part = try #require(snapshot.acknowledged[2])
        snapshot.acknowledged[2] = .init(receipt: part.receipt, sha256: SHA256.hash([9, 9, 9]).hex)
        try store.save(try snapshot.serialized(), key: fixture.key)

        let log = EventLog()
        let outcome = try await fixture.uploader(backend, chunkSize: 16_384).run { log.record($0) }
        let reports = log.events.withLock { events in
            events.compactMap { if case .resume(let report) = $0 { report } else { nil } }
        }
        #expect(reports.count == 2)
        #expect(reports.first?.level ?? .none >= .server)
        #expect(reports.last?.level == ResumeLevel.none)
        #expect(reports.last?.reason?.contains("part 2 differs") == true)
        #expect(backend.object(outcome.receipt.location) == content)
        #expect(backend.state.withLock { $0.created } == 2)
        #expect(backend.state.withLock { $0.aborted.count } == 1)
        #expect(outcome.partsSent == 24)
    }
}
