import AetherIO
import AetherScheduling
import AetherTransport

/// What the uploads of one job share: the state directory and its snapshot store, one HTTP client (its
/// connections reused from file to file), one scheduler (what it learned about the link carries over), the job's
/// options. `UploadJob` runs one upload in it, `CaptureJob` every file of a folder.
struct UploadContext: Sendable {
    let options: UploadJob.Options
    let state: UploadStateDirectory
    let store: VaultSnapshotStore
    let client: HTTPClient
    let scheduler = FusionScheduler()
    /// The device's degradation level, read for every upload of the job (at most once per decision interval).
    let resources: DeviceResourceMonitor?
    /// The job's rate cap (`maximumBytesPerSecond`), shared by its uploads: a capture keeps to one rate in all.
    let pacer: RatePacer?

    /// Resolves the state directory, opens its vault and the client; the caller shuts the client down.
    init(options: UploadJob.Options) throws {
        self.options = options
        state = try UploadStateDirectory.resolve(override: options.stateDirectory)
        store = try VaultSnapshotStore(stateDirectory: state)
        client = try HTTPClient(configuration: options.client)
        pacer = options.configuration.maximumBytesPerSecond.flatMap { try? RatePacer(bytesPerSecond: $0) }
        resources = options.configuration.resourceRoot.map {
            DeviceResourceMonitor(
                reader: DeviceResourceReader(root: $0), configuration: options.configuration.resourceThresholds)
        }
    }

    /// The destination's backend (`UploadJob.probe`); a probe stopped by cancellation is `.cancelled`.
    func probe(_ destination: String, emit: @Sendable (UploadEvent) -> Void) async throws -> DetectedBackend {
        do {
            return try await UploadJob.probe(destination, options: options, client: client) { emit(.waiting($0)) }
        } catch {
            if error.code == .cancelled || Task.isCancelled {
                throw UploaderError(.cancelled, "cancelled while the destination was probed")
            }
            throw error
        }
    }

    /// Uploads `file` to `destination` through `backend` under `key` (`FollowedUploader` with `follow`, else
    /// `ChunkedUploader`); `lock` is the key's lock when the caller holds it.
    func upload(
        file: FilePath, destination: String, key: String, backend: DetectedBackend,
        configuration: UploadConfiguration, follow: FollowOptions? = nil, telemetry: TelemetryRecorder?,
        lock: UploadLock?, expectedIdentity: (device: UInt64, inode: UInt64)? = nil,
        emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws -> UploadOutcome {
        var target = ChunkedUploader.Target(
            file: file, destination: destination, mode: backend.mode, endpoint: options.detection.s3Endpoint)
        target.expectedIdentity = expectedIdentity
        if let follow {
            let follower = FollowedUploader(
                target: target, backend: backend.backend, snapshots: store, snapshotKey: key,
                configuration: configuration, options: follow, telemetry: telemetry, heldLock: lock)
            return try await follower.run(emit)
        }
        let uploader = ChunkedUploader(
            target: target, backend: backend.backend, snapshots: store, snapshotKey: key,
            configuration: configuration, scheduler: scheduler, telemetry: telemetry, heldLock: lock,
            resources: resources, pacer: pacer)
        return try await uploader.run(emit)
    }

    /// The Byzantine spot checks of a native upload completed without a `ChunkedUploader` (a batched file,
    /// `docs/PROTOCOL.md` 3.10): the same checks (`ChunkedUploader.spotCheck`) over its `chunkHashes`, its file read
    /// under the change guard and compared with `identity`.
    func spotCheck(
        file: FilePath, destination: String, backend: DetectedBackend, remote: RemoteUpload, chunkHashes: [Digest32],
        identity: FileIdentity, configuration: UploadConfiguration, emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws -> SpotCheckReport {
        let target = ChunkedUploader.Target(
            file: file, destination: destination, mode: backend.mode, endpoint: options.detection.s3Endpoint)
        let uploader = ChunkedUploader(
            target: target, backend: backend.backend, snapshots: store, snapshotKey: "spot-check",
            configuration: configuration,
            scheduler: scheduler, telemetry: nil, heldLock: nil, resources: resources, pacer: pacer)
        return try await uploader.spotCheck(remote, chunkHashes: chunkHashes, identity: identity, emit: emit)
    }

    /// Opens the first streams' connections to `detected`'s origin (`ConnectionWarmup`) and watches the default
    /// route (`PathWatch`) until the returned watch is stopped.
    func watch(_ detected: DetectedBackend, emit: @escaping @Sendable (UploadEvent) -> Void) -> Watch {
        let client = self.client
        let connections = ConnectionWarmup.connections(for: detected, parallel: options.configuration.parallel)
        let warmUp = Task {
            if let report = await ConnectionWarmup.run(client: client, origin: detected.origin, count: connections) {
                emit(.connectionsWarmed(report))
            }
        }
        let path = PathWatch.start(
            client: client, scheduler: scheduler,
            reprobe: {
                _ = await ConnectionWarmup.run(client: client, origin: detected.origin, count: max(1, connections))
            },
            changed: { emit(.pathChanged($0)) })
        return Watch(warmUp: warmUp, path: path)
    }

    /// The warm-up and the path watch of a job.
    struct Watch: Sendable {
        let warmUp: Task<Void, Never>
        let path: PathWatch?

        /// Stops the watch and the warm-up (cancelled if still running), before the client shuts down.
        func stop() async {
            path?.stop()
            warmUp.cancel()
            await warmUp.value
        }
    }
}
