import AetherIO
import AetherReceiver
import FoundationEssentials
import Synchronization
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// `UploadJob`, the one call: it probes the destination, takes the upload's lock, opens connections ahead and runs
/// the engine; the same call again resumes; two uploaders of one key never run at once.
@Suite(.serialized) struct UploadJobTests {
    static func options(_ fixture: NativeUploadFixture, chunkSize: Int = 16 << 10) -> UploadJob.Options {
        UploadJob.Options(
            configuration: UploadConfiguration(chunkSize: chunkSize, parallel: 4),
            client: HTTPClientConfiguration(proxy: .none), stateDirectory: FilePath(fixture.upload.stateDirectory))
    }

    /// Starts `upload` in a task and returns it once the first part is acknowledged.
    static func runningPastTheFirstPart(
        _ upload: @escaping @Sendable (@escaping @Sendable (UploadEvent) -> Void) async throws -> UploadOutcome
    ) async -> Task<UploadOutcome, any Error> {
        let started = AsyncStream<Void>.makeStream()
        let running = Task {
            try await upload { event in
                if case .chunkAcknowledged = event { started.continuation.yield() }
            }
        }
        var acknowledged = started.stream.makeAsyncIterator()
        _ = await acknowledged.next()
        return running
    }

    @Test func oneCallProbesTheDestinationWarmsConnectionsAndStoresTheFileByteForByte() async throws {
        let content = UploadFixture.seeded(300_000, seed: 41)
        let fixture = try NativeUploadFixture(bytes: content)
        let job = try UploadJob(
            file: FilePath(fixture.upload.file), destination: fixture.destination, options: Self.options(fixture))
        #expect(
            job.key
                == SnapshotKey.derive(
                    canonicalPath: try UploadJob.canonical(FilePath(fixture.upload.file)),
                    destination: fixture.destination))
        var chosen: DestinationReport?
        var warmed: ConnectionWarmup.Report?
        var outcome: UploadOutcome?
        for try await event in job.events() {
            switch event {
            case .destination(let report): chosen = report
            case .connectionsWarmed(let report): warmed = report
            case .completed(let done): outcome = done
            default: break
            }
        }
        #expect(chosen?.mode == .native)
        #expect(chosen?.note == nil)
        // Four streams were asked for; the probe's connection was one of them or a fresh one was opened for each.
        if let warmed {
            #expect(warmed.connections == 4)
            #expect(warmed.failed == 0)
        }
        let done = try #require(outcome)
        #expect(done.receipt.size == Int64(content.count))
        #expect(try fixture.object(at: done.receipt.location) == content)
        // A finished upload keeps no snapshot, and its lock is free again.
        #expect(try fixture.upload.store().load(key: job.key) == nil)
        _ = try UploadLock(
            directory: UploadStateDirectory(path: FilePath(fixture.upload.stateDirectory)), key: job.key,
            waitingUpTo: 0)
    }

    /// The README's literal key used by two uploaders at once made them abort each other's uploads (410): now the
    /// second is refused while the first runs, in the same process, and nothing of the first is disturbed.
    @Test func twoUploadersOfOneKeyInOneProcessNeverRunAtOnce() async throws {
        let content = UploadFixture.seeded(400_000, seed: 42)
        let fixture = try NativeUploadFixture(bytes: content)
        let backend = try await fixture.backend()
        let store = try fixture.upload.store()
        var slow = UploadConfiguration(chunkSize: 16 << 10, parallel: 1)
        slow.maximumBytesPerSecond = 100_000
        let first = ChunkedUploader(
            target: .init(file: FilePath(fixture.upload.file), destination: fixture.destination, mode: .native),
            backend: backend, snapshots: store, snapshotKey: "example-upload", configuration: slow)
        let running = await Self.runningPastTheFirstPart { try await first.run($0) }
        let second = ChunkedUploader(
            target: .init(file: FilePath(fixture.upload.file), destination: fixture.destination, mode: .native),
            backend: backend, snapshots: store, snapshotKey: "example-upload",
            configuration: UploadConfiguration(chunkSize: 16 << 10))
        let refused = await #expect(throws: UploaderError.self) { try await second.run { _ in } }
        #expect(refused?.code == .alreadyRunning)
        let outcome = try await running.value
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        // Once the first let go, the key is free.
        let third = ChunkedUploader(
            target: .init(file: FilePath(fixture.upload.file), destination: fixture.destination, mode: .native),
            backend: backend, snapshots: store, snapshotKey: "example-upload",
            configuration: UploadConfiguration(chunkSize: 16 << 10))
        let again = try await third.run { _ in }
        #expect(try fixture.object(at: again.receipt.location) == content)
    }

    @Test func aSecondJobForTheSameFileAndDestinationIsRefusedWhileTheFirstRuns() async throws {
        let content = UploadFixture.seeded(400_000, seed: 43)
        let fixture = try NativeUploadFixture(bytes: content)
        var options = Self.options(fixture)
        options.configuration.parallel = 1
        options.configuration.maximumBytesPerSecond = 100_000
        let job = try UploadJob(file: FilePath(fixture.upload.file), destination: fixture.destination, options: options)
        let running = await Self.runningPastTheFirstPart { try await job.run($0) }
        let twin = try UploadJob(
            file: FilePath(fixture.upload.file), destination: fixture.destination, options: Self.options(fixture))
        #expect(twin.key == job.key)
        let refused = await #expect(throws: UploaderError.self) { try await twin.run { _ in } }
        #expect(refused?.code == .alreadyRunning)
        let outcome = try await running.value
        #expect(try fixture.object(at: outcome.receipt.location) == content)
    }

    @Test func aCancelledJobKeepsItsSnapshotAndTheSameCallResumesIt() async throws {
        let content = UploadFixture.seeded(600_000, seed: 44)
        let fixture = try NativeUploadFixture(bytes: content)
        var slow = Self.options(fixture)
        slow.configuration.parallel = 1
        slow.configuration.maximumBytesPerSecond = 300_000
        let job = try UploadJob(file: FilePath(fixture.upload.file), destination: fixture.destination, options: slow)
        let acknowledged = Atomic(0)
        let running = Task {
            try await job.run { event in
                if case .chunkAcknowledged = event { acknowledged.add(1, ordering: .relaxed) }
            }
        }
        while acknowledged.load(ordering: .relaxed) < 3 { try await Task.sleep(for: .milliseconds(20)) }
        running.cancel()
        let paused = await #expect(throws: UploaderError.self) { try await running.value }
        #expect(paused?.code == .cancelled)
        #expect(try fixture.upload.store().load(key: job.key) != nil)
        let again = try UploadJob(
            file: FilePath(fixture.upload.file), destination: fixture.destination, options: Self.options(fixture))
        let resumed = Mutex<ResumeReport?>(nil)
        let outcome = try await again.run { event in
            if case .resume(let report) = event { resumed.withLock { $0 = report } }
        }
        let report = try #require(resumed.withLock { $0 })
        #expect(report.level >= .server)
        #expect(report.reusedParts >= 3)
        #expect(try fixture.object(at: outcome.receipt.location) == content)
    }

    @Test func aDestinationRefusingConnectionsIsAskedAgainThenATypedError() async throws {
        let fixture = try NativeUploadFixture(bytes: UploadFixture.seeded(1000, seed: 45))
        var options = Self.options(fixture)
        options.refusedWait = 1
        // A port nothing listens on: the server's own, after it stopped.
        let destination = fixture.destination
        fixture.server.stop()
        let job = try UploadJob(file: FilePath(fixture.upload.file), destination: destination, options: options)
        let waited = Mutex<[String]>([])
        let error = await #expect(throws: TransportError.self) {
            try await job.run { event in
                if case .waiting(let what) = event { waited.withLock { $0.append(what) } }
            }
        }
        #expect(error?.code == .connectionRefused)
        #expect(waited.withLock { $0 } == ["the destination refuses connections; trying again for up to 1 s"])
    }
}
