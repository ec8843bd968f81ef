import AetherIO
import AetherSecurity
import AetherTransport
import AetherUploader
import FoundationEssentials
import Glibc

/// What `aether upload`, `resume`, `status` and `cancel` share: the state directory, credentials, the HTTP client
/// and the backend for a destination, and the exit statuses they document.
enum UploadSetup {
    /// The exit statuses of the upload commands (`aether help upload` lists them).
    enum Exit {
        static let done: Int32 = 0
        static let failed: Int32 = 1
        static let usage: Int32 = 2
        static let paused: Int32 = 3
        static let verificationFailed: Int32 = 4
    }

    static let exitCodesText = """
        exit status:
          0  the upload finished and its receipt matched the local digests
          1  the upload failed (the message names the cause and the next step; its state is kept for a resume)
          2  the command line was wrong
          3  paused by Ctrl-C (SIGINT) or SIGTERM: the state is saved; run the same command or aether resume ID
             (stopped before the destination created the upload, nothing is kept and the message says so)
          4  the destination's receipt does not match the file (SHA-256, Merkle root or chain head)
        """

    /// The snapshot vault of the state directory (`--state-dir`, else `$XDG_STATE_HOME/aether`, else
    /// `~/.local/state/aether`).
    static func store(_ arguments: Arguments) throws -> VaultSnapshotStore {
        try VaultSnapshotStore(stateDirectory: UploadStateDirectory.resolve(override: arguments.path("state-dir")))
    }

    /// The lock that keeps a second process off upload `key` while this one runs it (`.alreadyRunning`).
    static func lock(_ arguments: Arguments, key: String) throws -> UploadLock {
        try UploadLock(directory: UploadStateDirectory.resolve(override: arguments.path("state-dir")), key: key)
    }

    /// The bearer token from `--token` or `--token-file` (first line), if any; never printed.
    static func token(_ arguments: Arguments) throws -> String? {
        try checkTokenOptions(arguments)
        if let token = arguments.option("token") { return try checked(token) }
        guard let path = arguments.path("token-file") else { return nil }
        let bytes = try GuardedFile(path: path).readAll(maximumBytes: 64 << 10)
        let line = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
        return try checked(line ?? "")
    }

    /// `--token` and `--token-file` exclude each other (a usage error, before anything is read).
    static func checkTokenOptions(_ arguments: Arguments) throws(Arguments.UsageError) {
        if arguments.option("token") != nil, arguments.path("token-file") != nil {
            throw Arguments.UsageError(description: "give --token or --token-file, not both")
        }
    }

    private static func checked(_ token: String) throws -> String {
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw Arguments.UsageError(description: "the token must be printable ASCII without spaces")
        }
        return token
    }

    /// An HTTP client, pinned to `--pin` (a SHA-256 SPKI pin in hex) when given, each request's body sent at most
    /// at `maximumSendRate` bytes per second when given (`--max-rate`).
    static func client(_ arguments: Arguments, maximumSendRate: Int64? = nil) throws -> HTTPClient {
        var configuration = HTTPClientConfiguration(maximumSendBytesPerSecond: maximumSendRate)
        if let name = arguments.option("congestion") {
            guard name == "system" || HTTPClientConfiguration(congestionControl: name).congestionControl == name else {
                throw Arguments.UsageError(
                    description: "--congestion takes system or a congestion control's name such as bbr or cubic")
            }
            configuration.congestionControl = name == "system" ? nil : name
        }
        if let text = arguments.option("pin") {
            let digest: Digest32
            do {
                digest = try Digest32(hex: text)
            } catch {
                throw Arguments.UsageError(description: "--pin must be 64 hex digits (aether pin CERT.pem prints it)")
            }
            let pin = SPKIPin(digest: digest)
            configuration.pinning = try CertificatePinManager(
                configuration: PinConfiguration(caPins: [pin], emergencyLeafPins: [pin], issuedAt: Date()))
        }
        return try HTTPClient(configuration: configuration)
    }

    /// The backend for `destination`: probed (`http(s)://`) or S3 (`s3://` with `endpoint`), forcing `forced`.
    /// A probe whose connection was reset (a receiver restarting under it) is sent again for up to `resetWait`
    /// seconds, as the upload's own requests are; a refused connection only for `refusedWait` seconds, since at
    /// the start it more often means a wrong address than a receiver coming back.
    static func backend(
        destination: String, forced: TransportMode?, endpoint: String?, token: String?, client: HTTPClient,
        resetWait: Double = UploadConfiguration().connectionWaitLimit, refusedWait: Double = 10
    ) async throws -> DetectedBackend {
        var headers = HTTPHeaders()
        if let token { headers.replace("Authorization", "Bearer " + token) }
        let options = BackendDetector.Options(
            headers: headers, s3Endpoint: endpoint, s3Flavor: endpoint == nil ? .aws : .minio)
        let detector = BackendDetector(client: client, options: options)
        let wait = PathFailureWait(resetLimit: resetWait, refusedLimit: refusedWait)
        return try await wait.run(waiting: { error, limit in
            let what = error.code == .connectionRefused ? "refuses connections" : "reset the connection"
            StandardError.write("aether: the destination \(what); trying again for up to \(Int(limit)) s\n")
        }) { () async throws(TransportError) in try await detector.detect(destination, forcing: forced) }
    }

    /// The canonical path of `path` (symbolic links and `..` resolved), as bytes.
    static func canonical(_ path: FilePath) throws -> FilePath {
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
