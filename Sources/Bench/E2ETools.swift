import AetherTestSupport
import AetherTransport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How one client of `aether-bench e2e` ended.
struct ClientFinish {
    /// Wall seconds to completion, or to the deadline when it was stopped.
    let seconds: Double
    /// Whether it was stopped at the deadline.
    let stopped: Bool
    /// Its exit status when it gave up before the deadline (nil: it finished, or was stopped).
    var failedStatus: Int32? = nil
    /// Monotonic seconds at which `seconds` began: the process's start, or a Python client's own start of its
    /// upload (after its imports); nil where not recorded.
    var started: Double? = nil

    /// Whether it delivered the file (neither stopped nor given up).
    var finished: Bool { !stopped && failedStatus == nil }
}

/// The servers of one emulated link, inside its namespace: `aether serve` (bearer token), moto and tuspyserver.
struct LinkServers {
    let receiverURL: String
    let tokenFile: String
    let motoEndpoint: String
    let tusURL: String
    let children: [BenchChild]

    func stop() { children.forEach { $0.stop() } }
}

/// What `aether-bench e2e` runs: the release `aether` beside this executable, the project's `.venv` Python and the
/// bench's peer script (`E2EPeerScript`), written into the bench's temporary directory.
struct E2ETools {
    let directory: String
    private(set) var aether: String
    let python: String
    let script: String
    let projectRoot: String

    /// Nil (after printing why) when `aether` or the venv is missing.
    init?(directory: String) throws {
        self.directory = directory
        let beside = IOBaseline.executableDirectory()
        aether = beside + "/aether"
        guard unsafe access(aether, X_OK) == 0 else {
            E2EBench.say("e2e: skipped: \(aether) is missing; build it with `swift build -c release`")
            return nil
        }
        // The project root: the first parent of the build directory holding `.venv` (scripts/setup-venv.sh).
        var root = beside
        while !root.isEmpty, unsafe access(root + "/.venv/bin/python", X_OK) != 0 {
            root = root.lastIndex(of: "/").map { String(root[..<$0]) } ?? ""
        }
        guard !root.isEmpty else {
            E2EBench.say("e2e: skipped: the Python venv is missing; run scripts/setup-venv.sh (or make venv)")
            return nil
        }
        projectRoot = root
        python = root + "/.venv/bin/python"
        script = directory + "/e2e_peer.py"
        try Data(E2EPeerScript.text.utf8).write(to: URL(fileURLWithPath: script))
    }

    /// These tools with another build's `aether` as the client (`--compare-aether`).
    func using(aether path: String) -> E2ETools {
        var copy = self
        copy.aether = path
        return copy
    }

    private func logs(_ name: String) -> String { directory + "/" + name }

    /// A client run to its exit or the deadline. With a finite deadline (the mobile line) giving up is a result
    /// (`failedStatus`); without one, an exit other than 0 is an error.
    func client(
        _ arguments: [String], namespace: String? = nil, environment: [String: String] = [:],
        name: String, deadline: Double
    ) async throws -> ClientFinish {
        let child = try BenchChild(arguments, namespace: namespace, environment: environment, logs: logs(name))
        let finish = await child.finish(deadline: deadline)
        if !finish.stopped, finish.status != 0, deadline.isFinite {
            return ClientFinish(
                seconds: finish.seconds, stopped: false, failedStatus: finish.status, started: child.started)
        }
        guard finish.stopped || finish.status == 0 else {
            throw BenchError("\(name) exited \(finish.status): \(child.errorTail)")
        }
        return ClientFinish(seconds: finish.seconds, stopped: finish.stopped, started: child.started)
    }

    /// The Python client's own timing (from the JSON line it prints: its seconds, and the monotonic time its upload
    /// started, after its imports), or the wall time from its process's start when it was stopped or gave up.
    private func pythonClient(
        _ arguments: [String], namespace: String? = nil, environment: [String: String] = [:], name: String,
        deadline: Double
    ) async throws -> ClientFinish {
        let child = try BenchChild(
            [python, script] + arguments, namespace: namespace, environment: environment, logs: logs(name))
        let finish = await child.finish(deadline: deadline)
        if finish.stopped { return ClientFinish(seconds: finish.seconds, stopped: true, started: child.started) }
        if finish.status != 0, deadline.isFinite {
            return ClientFinish(
                seconds: finish.seconds, stopped: false, failedStatus: finish.status, started: child.started)
        }
        guard finish.status == 0,
            let line = finish.output.split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let seconds = object["seconds"] as? Double
        else { throw BenchError("\(name) exited \(finish.status): \(child.errorTail)") }
        return ClientFinish(seconds: seconds, stopped: false, started: object["started"] as? Double ?? child.started)
    }

    // MARK: Servers

    /// moto on `host:port` (0: a free port) with the bucket `aether-bench`.
    func startMoto(host: String, port: Int, namespace: String?, name: String) async throws -> (
        server: BenchChild, endpoint: String
    ) {
        let child = try BenchChild([python, script, "moto", host, "\(port)"], namespace: namespace, logs: logs(name))
        let line = try await child.waitForLine(startingWith: "ready", timeout: 60, what: "moto")
        guard let chosen = line.split(separator: " ").last.flatMap({ Int($0) }) else {
            child.stop()
            throw BenchError("moto did not say its port: \(line)")
        }
        return (child, "http://\(host):\(chosen)")
    }

    /// `aether serve`, moto and tuspyserver in the old link's namespace, on its address.
    func startLinkServers(lab: LinkLab, prefix: String) async throws -> LinkServers {
        try await startLinkServers(namespace: lab.namespace, address: lab.peerAddress, prefix: prefix)
    }

    /// `aether serve` (a bearer token: a non-loopback bind needs `--tokens`), moto and tuspyserver in `namespace`,
    /// listening on `address` (ports 8080, 8081 and 8082: the namespace is the bench's own).
    func startLinkServers(namespace: String, address: String, prefix: String) async throws -> LinkServers {
        var children: [BenchChild] = []
        do {
            let tokenFile = directory + "/\(prefix)-token"
            let token = (0..<32).map { _ in String(Int.random(in: 0..<16), radix: 16) }.joined()
            try Data("bench:\(token)\n".utf8).write(to: URL(fileURLWithPath: tokenFile))
            guard unsafe chmod(tokenFile, 0o600) == 0 else { throw BenchError("cannot chmod \(tokenFile)") }
            let receiver = try BenchChild(
                [
                    aether, "serve", "--dir", directory + "/\(prefix)-store", "--port", "8080", "--bind",
                    address, "--tokens", tokenFile, "--log-format", "json",
                ], namespace: namespace, logs: logs("\(prefix)-serve"))
            children.append(receiver)
            _ = try await receiver.waitForLine(startingWith: "listening on", timeout: 60, what: "aether serve")
            let clientToken = directory + "/\(prefix)-client-token"
            try Data(token.utf8).write(to: URL(fileURLWithPath: clientToken))
            _ = unsafe chmod(clientToken, 0o600)
            let moto = try await startMoto(host: address, port: 8081, namespace: namespace, name: "\(prefix)-moto")
            children.append(moto.server)
            let tusDirectory = directory + "/\(prefix)-tus"
            let tus = try BenchChild(
                [python, script, "tus", address, "8082", tusDirectory], namespace: namespace,
                logs: logs("\(prefix)-tus"))
            children.append(tus)
            _ = try await tus.waitForLine(startingWith: "ready", timeout: 60, what: "tuspyserver")
            return LinkServers(
                receiverURL: "http://\(address):8080/uploads", tokenFile: clientToken,
                motoEndpoint: moto.endpoint, tusURL: "http://\(address):8082/files/", children: children)
        } catch {
            children.forEach { $0.stop() }
            throw error
        }
    }

    // MARK: Clients

    /// `aether upload FILE s3://aether-bench/KEY --endpoint E [--s3-flavor F]` (credentials: any by default, moto
    /// does not check them).
    func aetherToS3(
        file: String, endpoint: String, key: String, name: String, namespace: String? = nil, deadline: Double,
        credentials: [String: String] = [
            "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1",
        ], flavor: String? = nil
    ) async throws -> ClientFinish {
        try await client(
            [
                aether, "upload", file, "s3://aether-bench/\(key)", "--endpoint", endpoint, "--state-dir",
                directory + "/\(name)-state", "--quiet", "--trace", directory + "/\(name).trace",
            ] + (flavor.map { ["--s3-flavor", $0] } ?? []), namespace: namespace,
            environment: credentials, name: name, deadline: deadline)
    }

    /// Debian's `aws s3 cp FILE s3://aether-bench/KEY --endpoint-url E` (its default multipart settings).
    func awsCopy(
        aws: String, file: String, endpoint: String, key: String, name: String, credentials: [String: String]
    ) async throws -> ClientFinish {
        try await client(
            [aws, "--endpoint-url", endpoint, "s3", "cp", file, "s3://aether-bench/\(key)", "--only-show-errors"],
            environment: credentials, name: name, deadline: .infinity)
    }

    /// Debian's `rclone copyto FILE :s3:aether-bench/KEY` (provider Ceph, its default chunk size and concurrency),
    /// through `env -u AWS_CA_BUNDLE`: rclone fails where that names a bundle it cannot use for plain HTTP.
    func rcloneCopy(
        rclone: String, file: String, endpoint: String, key: String, name: String, rgw: RGWProcess
    ) async throws -> ClientFinish {
        try await client(
            [
                "/usr/bin/env", "-u", "AWS_CA_BUNDLE", rclone, "copyto", file, ":s3:aether-bench/\(key)",
                "--s3-provider", "Ceph", "--s3-endpoint", endpoint, "--s3-access-key-id", rgw.accessKeyID,
                "--s3-secret-access-key", rgw.secretAccessKey, "--s3-region", rgw.region, "--config", "/dev/null",
            ], name: name, deadline: .infinity)
    }

    /// The S3 client of AetherTransport for `bucket` on `rgw`, sending through `http`.
    static func objectClient(rgw: RGWProcess, bucket: String, http: HTTPClient) throws -> S3ObjectClient {
        try S3ObjectClient(
            bucket: bucket, endpoint: S3Endpoint(url: rgw.endpoint, region: rgw.region),
            credentials: S3Credentials(accessKeyID: rgw.accessKeyID, secretAccessKey: rgw.secretAccessKey),
            client: http)
    }

    /// Deletes `key` (with the S3 client of AetherTransport).
    func deleteObject(rgw: RGWProcess, bucket: String, key: String) async throws {
        let http = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { http.shutDown() }
        try await Self.objectClient(rgw: rgw, bucket: bucket, http: http).deleteObject(key)
    }

    /// `aether upload FILE URL --token-file F` to the link's `aether serve`, dedup off: every run sends the same
    /// file, and a receiver that already holds it would make the later runs instant uploads, not transfers.
    /// `options` are added (`--parallel N`, `--congestion C`, ...).
    func aetherToReceiver(
        file: String, servers: LinkServers, name: String, namespace: String? = nil, options: [String] = [],
        deadline: Double
    ) async throws -> ClientFinish {
        try await client(
            [
                aether, "upload", file, servers.receiverURL, "--token-file", servers.tokenFile, "--state-dir",
                directory + "/\(name)-state", "--json", "--flags", "-dedup", "--trace", directory + "/\(name).trace",
            ] + options, namespace: namespace, name: name, deadline: deadline)
    }

    /// `aether upload DIR URL --token-file F` (a capture) to the link's `aether serve`, dedup off (each run sends
    /// the same folder); `options` are added (`--include`, `--files N`).
    func aetherCaptureToReceiver(
        folder: String, servers: LinkServers, name: String, namespace: String, options: [String] = [],
        deadline: Double
    ) async throws -> ClientFinish {
        try await client(
            [
                aether, "upload", folder, servers.receiverURL, "--token-file", servers.tokenFile, "--state-dir",
                directory + "/\(name)-state", "--json", "--flags", "-dedup",
            ] + options, namespace: namespace, name: name, deadline: deadline)
    }

    /// boto3 `upload_file` with the default TransferConfig and standard retries.
    func boto3(
        file: String, endpoint: String, key: String, name: String, namespace: String? = nil, deadline: Double,
        credentials: [String: String] = [:]
    ) async throws -> ClientFinish {
        try await pythonClient(
            ["boto3", endpoint, "aether-bench", key, file], namespace: namespace, environment: credentials, name: name,
            deadline: deadline)
    }

    /// tuspy with 8 MiB chunks, retries and resume.
    func tuspy(file: String, url: String, name: String, namespace: String? = nil, deadline: Double) async throws
        -> ClientFinish
    {
        try await pythonClient(["tuspy", url, file], namespace: namespace, name: name, deadline: deadline)
    }

    /// Debian's awscli (`/usr/bin/aws`, scripts/install-deps.sh): `aws s3 cp FILE s3://aether-bench/KEY` with its
    /// default transfer settings, the endpoint moto's, the credentials from the environment only (no config or
    /// credentials file is read).
    func awsCLI(file: String, endpoint: String, key: String, name: String, namespace: String?, deadline: Double)
        async throws -> ClientFinish
    {
        try await client(
            [
                Self.awsCLI, "s3", "cp", file, "s3://aether-bench/\(key)", "--endpoint-url", endpoint,
                "--no-progress", "--only-show-errors",
            ],
            namespace: namespace,
            environment: [
                "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_CONFIG_FILE": directory + "/aws-config-none",
                "AWS_SHARED_CREDENTIALS_FILE":
                    directory + "/aws-credentials-none", "AWS_PAGER": "",
            ], name: name, deadline: deadline)
    }

    /// Debian's awscli.
    static let awsCLI = "/usr/bin/aws"

    /// A raw TCP stream of `file` to a sink in the lab's namespace; the sender's own seconds.
    func rawStream(file: String, lab: LinkLab, port: Int, name: String) async throws -> Double {
        let sink = try BenchChild(
            [python, script, "sink", lab.peerAddress, "\(port)"], namespace: lab.namespace, logs: logs(name + "-sink"))
        defer { sink.stop() }
        _ = try await sink.waitForLine(startingWith: "ready", timeout: 30, what: "the TCP sink")
        let sent = try await pythonClient(
            ["send", lab.peerAddress, "\(port)", file], name: name, deadline: .infinity)
        return sent.seconds
    }
}
