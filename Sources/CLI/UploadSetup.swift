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

    /// An HTTP client, pinned to `--pin` (a SHA-256 SPKI pin in hex) when given.
    static func client(_ arguments: Arguments) throws -> HTTPClient {
        try HTTPClient(configuration: clientConfiguration(arguments))
    }

    /// The HTTP client's settings: pinned to `--pin` (a SHA-256 SPKI pin in hex) when given, the congestion control
    /// of `--congestion`, each request's body sent at most at `maximumSendRate` bytes per second when given
    /// (`--max-rate`).
    static func clientConfiguration(_ arguments: Arguments, maximumSendRate: Int64? = nil) throws
        -> HTTPClientConfiguration
    {
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
        return configuration
    }

    /// `--s3-flavor NAME` (aws, r2, minio, ceph, unknown), nil without it; only with an `s3://` destination.
    static func s3Flavor(_ arguments: Arguments, destination: String) throws -> S3Flavor? {
        guard let name = arguments.option("s3-flavor") else { return nil }
        guard let flavor = S3Flavor(rawValue: name) else {
            throw Arguments.UsageError(description: "--s3-flavor takes aws, r2, minio, ceph or unknown")
        }
        guard destination.hasPrefix("s3://") else {
            throw Arguments.UsageError(description: "--s3-flavor goes with an s3://bucket/key destination")
        }
        return flavor
    }

    /// The backend for `destination`: probed (`http(s)://`) or S3 (`s3://` with `endpoint`, of `flavor` or else the
    /// endpoint's: AWS without one, unknown for a custom one), forcing `forced`; a reset or refused probe is sent
    /// again for a while (`UploadJob.probe`), which standard error says.
    static func backend(
        destination: String, forced: TransportMode?, endpoint: String?, flavor: S3Flavor? = nil, token: String?,
        client: HTTPClient
    ) async throws -> DetectedBackend {
        var options = UploadJob.Options(forcedProtocol: forced)
        options.detection.s3Endpoint = endpoint
        options.detection.s3Flavor = flavor
        if let token { options.bearerToken(token) }
        return try await UploadJob.probe(destination, options: options, client: client) {
            StandardError.write("aether: \($0)\n")
        }
    }
}
