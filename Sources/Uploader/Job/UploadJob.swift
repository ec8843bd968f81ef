public import AetherIO
import AetherScheduling
public import AetherTransport
import Glibc

/// One upload of one file, from the library in one call: the job owns what `ChunkedUploader` leaves to its caller.
/// It resolves the state directory, derives the resume key from the file's canonical path and the destination (the
/// same file to the same destination resumes), takes the upload's lock before anything is sent, opens the HTTP
/// client, probes the destination (`http(s)://` for native, IETF or tus; `s3://bucket/key` for S3) and waits out a
/// destination that resets or refuses connections for a bounded time, keeps the telemetry, opens the connections
/// the first requests need while the first parts are read (`ConnectionWarmup`), watches the default route and
/// abandons requests stalled on an old path at once (`PathWatch`), and runs the uploader (`FollowedUploader` for a
/// file still being written). `aether upload` and `aether resume` are this call with a view on its events.
public struct UploadJob: Sendable {
    /// How the job runs.
    public struct Options: Sendable {
        /// The uploader's settings (parts, streams, rate, parity, flags).
        public var configuration: UploadConfiguration
        /// The HTTP client's settings (pinning, congestion control, the send rate).
        public var client: HTTPClientConfiguration
        /// How the destination is probed and its backend built (header fields, S3 endpoint, flavor, credentials).
        public var detection: BackendDetector.Options
        /// The protocol to use instead of the first the server offers; nil takes the server's preference.
        public var forcedProtocol: TransportMode?
        /// Where resume state, locks and telemetry live; nil: `$XDG_STATE_HOME/aether` or `~/.local/state/aether`.
        public var stateDirectory: FilePath?
        /// Follow a file still being written until its writer is done (`FollowedUploader`); nil: the file is whole.
        public var follow: FollowOptions?
        /// Also write the per-attempt trace (JSON lines) to this file, which must not exist.
        public var traceFile: FilePath?
        /// Seconds a destination refusing connections at the start is waited for (a reset connection is waited for
        /// `configuration.connectionWaitLimit`): at the start a refusal more often means a wrong address than a
        /// receiver coming back.
        public var refusedWait: Double

        /// Options; the defaults are `aether upload`'s.
        public init(
            configuration: UploadConfiguration = UploadConfiguration(),
            client: HTTPClientConfiguration = HTTPClientConfiguration(),
            detection: BackendDetector.Options = BackendDetector.Options(), forcedProtocol: TransportMode? = nil,
            stateDirectory: FilePath? = nil, follow: FollowOptions? = nil, traceFile: FilePath? = nil,
            refusedWait: Double = 10
        ) {
            self.configuration = configuration
            self.client = client
            self.detection = detection
            self.forcedProtocol = forcedProtocol
            self.stateDirectory = stateDirectory
            self.follow = follow
            self.traceFile = traceFile
            self.refusedWait = refusedWait
        }

        /// Sends `Authorization: Bearer token` with every request to an HTTP destination (never logged).
        public mutating func bearerToken(_ token: String) {
            detection.headers.replace("Authorization", "Bearer " + token)
        }
    }

    /// The file.
    public let file: FilePath
    /// The destination as given.
    public let destination: String
    /// The upload's id: its resume key, its lock and its telemetry name (`aether resume KEY`, `aether status`).
    public let key: String
    /// The job's options.
    public let options: Options

    /// A job uploading `file` to `destination`; its key is derived from the file's canonical path and the
    /// destination, so the same call later resumes it. Throws when the file's path cannot be resolved.
    public init(file: FilePath, destination: String, options: Options = Options()) throws(IOError) {
        try self.init(
            file: file, destination: destination,
            key: SnapshotKey.derive(canonicalPath: Self.canonical(file), destination: destination), options: options)
    }

    /// A job under an existing key (`aether resume KEY` takes the file and destination from the kept snapshot).
    public init(file: FilePath, destination: String, key: String, options: Options = Options()) {
        self.file = file
        self.destination = destination
        self.key = key
        self.options = options
    }

    /// Runs the upload in a task and returns its events; the stream ends after `.completed` or with the error.
    /// Ending the iteration (or cancelling the consuming task) cancels the upload, which keeps its snapshot.
    public func events(bufferLimit: Int = 256) -> AsyncThrowingStream<UploadEvent, any Error> {
        EventStream.make(bufferLimit: bufferLimit) { emit in _ = try await self.run(emit) }
    }

    /// Runs the upload, passing each event to `emit`; returns the outcome (also sent as `.completed`).
    /// Throws `UploaderError` (`.alreadyRunning` while another uploader holds the key, `.cancelled` when the task
    /// is cancelled: the snapshot is kept), or the probe's `TransportError` when the destination could not be
    /// reached or offers no protocol spoken here.
    public func run(_ emit: @escaping @Sendable (UploadEvent) -> Void) async throws -> UploadOutcome {
        let context = try UploadContext(options: options)
        defer { context.client.shutDown() }
        let lock = try UploadLock(directory: context.state, key: key)
        defer { withExtendedLifetime(lock) {} }
        let detected = try await context.probe(destination, emit: emit)
        emit(.destination(DestinationReport(mode: detected.mode, note: detected.fallbackReason)))
        let recorder = try TelemetryRecorder(
            stateDirectory: context.state, uploadKey: key, traceFile: options.traceFile)
        let upload = Task {
            try await context.upload(
                file: file, destination: destination, key: key, backend: detected, configuration: options.configuration,
                follow: options.follow, telemetry: recorder, lock: lock, emit: emit)
        }
        let watch = context.watch(detected, emit: emit)
        // The upload's end, then the warm-up's (cancelled if still running), before the client shuts down.
        let ended = await withTaskCancellationHandler {
            await upload.result
        } onCancel: {
            upload.cancel()
        }
        await watch.stop()
        return try ended.get()
    }

    /// The destination's backend (`BackendDetector` with `options.detection`), the probe sent again while its
    /// connection is reset (for `options.configuration.connectionWaitLimit`) or refused (for `options.refusedWait`);
    /// any other failure (an error answer, a destination that never answers) is thrown at once, so a wrong or dead
    /// destination is said soon. `waiting` hears the first path failure waited out. Cancelled, it throws
    /// `.cancelled`.
    public static func probe(
        _ destination: String, options: Options, client: HTTPClient, waiting: (String) -> Void = { _ in }
    ) async throws(TransportError) -> DetectedBackend {
        let detector = BackendDetector(client: client, options: options.detection)
        let retries = RetryPolicy(configuration: options.configuration)
        return try await retries.query(
            refusedLimit: options.refusedWait, attempts: 1,
            waiting: { error, limit in
                let what = error.code == .connectionRefused ? "refuses connections" : "reset the connection"
                waiting("the destination \(what); trying again for up to \(Int(limit)) s")
            }
        ) { () async throws(TransportError) in
            try await detector.detect(destination, forcing: options.forcedProtocol)
        }
    }

    /// The canonical path of `path` (symbolic links and `..` resolved), as bytes.
    public static func canonical(_ path: FilePath) throws(IOError) -> FilePath {
        let resolved: [UInt8]? = unsafe path.withCString { pointer in
            guard let result = unsafe realpath(pointer, nil) else { return nil }
            defer { unsafe free(result) }
            let length = unsafe strlen(result)
            return unsafe Array(UnsafeRawBufferPointer(start: result, count: length))
        }
        let failure = errno
        guard let resolved else {
            throw IOError(.systemCall, "\(path) cannot be resolved", errno: failure, path: path.description)
        }
        return try FilePath(bytes: resolved)
    }
}

/// The protocol an upload job chose for its destination.
public struct DestinationReport: Sendable, Hashable {
    /// The protocol.
    public let mode: TransportMode
    /// Why a protocol the server preferred was not chosen, or nil.
    public let note: String?
}
