import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A Ceph RADOS Gateway from Debian (Ceph 16.2) for the tests and the bench: `scripts/rgw.sh start` (which installs
/// the packages if missing) runs one ceph-mon, one bluestore ceph-osd on a sparse file and radosgw, all under a
/// temporary directory, listening on 127.0.0.1 only, with one S3 user. A watchdog runs `scripts/rgw.sh stop` (every
/// daemon stopped by the pid it recorded, the directory removed) when the creating process ends, however it ends.
///
/// RGW checks what S3 checks and moto does not: SigV4, the signed payload SHA-256, Content-MD5, the part sizes at
/// completion. It does not check `x-amz-checksum-*` (16.2 accepts and ignores them).
public final class RGWProcess: Sendable {
    /// The directory of the cluster: configuration, keyring, the daemons' data, logs and pid files.
    public let directory: String
    /// `http://127.0.0.1:PORT`.
    public let endpoint: String
    /// radosgw's port.
    public let port: UInt16
    /// The S3 user's access key id.
    public let accessKeyID: String
    /// The S3 user's secret key (a test secret, for this throwaway cluster only).
    public let secretAccessKey: String
    /// The signing region (`us-east-1`).
    public let region: String
    /// The pids of ceph-mon, ceph-osd and radosgw, by name (`mon`, `osd`, `rgw`).
    public let processIDs: [String: Int32]

    /// Whether Debian's radosgw is installed (`scripts/rgw.sh` installs it when it is not).
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/radosgw") }

    /// `scripts/rgw.sh` of this package.
    public static let script =
        "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/scripts/rgw.sh"

    private struct Announcement: Decodable {
        let endpoint: String
        let accessKey: String
        let secretKey: String
        let region: String
        let pids: [String: Int32]
    }

    /// The network namespace the daemons run in (nil: the host's), and the extra `ADDRESS:PORT` radosgw listens on
    /// there (`RGW_LISTEN`: a link lab's server address, which clients in the lab's client namespace reach).
    public let namespace: String?
    public let listen: String?

    /// Starts a new cluster with `buckets` created; with `namespace`, every daemon runs in that network namespace
    /// (its own loopback), radosgw also on `listen`.
    public init(buckets: [String] = [], namespace: String? = nil, listen: String? = nil) throws(RGWProcessError) {
        self.namespace = namespace
        self.listen = listen
        // Short: the daemons' admin sockets live under it and must fit in sun_path.
        directory = "/tmp/aether-rgw-" + UUID().uuidString.prefix(8).lowercased()
        // The watchdog first, so that a start that fails half way is cleaned up too.
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = [
            "-c", "while kill -0 \"$1\" 2>/dev/null; do sleep 1; done; \"$2\" stop \"$3\" >/dev/null 2>&1",
            "watchdog", "\(getpid())", Self.script, directory,
        ]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        do { try watchdog.run() } catch { throw RGWProcessError("cannot start the watchdog: \(error)") }
        // The script picks free ports and releases them before the daemons bind them: a port taken meanwhile fails
        // that start (the script then stops what it started), and another start picks new ones.
        var output = ""
        for attempt in 1...3 {
            do {
                output = try Self.run(["start", directory] + buckets, namespace: namespace, listen: listen)
                break
            } catch  where attempt < 3 {
                continue
            }
        }
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let started = try? JSONDecoder().decode(Announcement.self, from: Data(line.utf8)),
            let port = started.endpoint.split(separator: ":").last.flatMap({ UInt16($0) })
        else { throw RGWProcessError("scripts/rgw.sh start printed no endpoint: \(output.suffix(2000))") }
        endpoint = started.endpoint
        self.port = port
        accessKeyID = started.accessKey
        secretAccessKey = started.secretKey
        region = started.region
        processIDs = started.pids
    }

    /// The environment an `aether` child reads its S3 credentials from.
    public var credentialsEnvironment: [String: String] {
        ["AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey, "AWS_REGION": region]
    }

    /// Creates `buckets` (one already there is kept).
    public func createBuckets(_ buckets: [String]) throws(RGWProcessError) {
        _ = try Self.run(["start", directory] + buckets, namespace: namespace, listen: listen)
    }

    /// Stops every daemon by its pid and removes the directory.
    public func stop() throws(RGWProcessError) {
        _ = try Self.run(["stop", directory])
    }

    /// Runs `scripts/rgw.sh` with `arguments` (in `namespace`, with `RGW_LISTEN=listen`); its standard output and
    /// error.
    private static func run(_ arguments: [String], namespace: String? = nil, listen: String? = nil)
        throws(RGWProcessError) -> String
    {
        let outcome: DaemonCommand.Outcome
        var command = (script, arguments)
        if let namespace {
            command = (
                "/usr/sbin/ip",
                ["netns", "exec", namespace, "/usr/bin/env"] + (listen.map { ["RGW_LISTEN=\($0)"] } ?? []) + [script]
                    + arguments
            )
        }
        do { outcome = try DaemonCommand.run(command.0, command.1, tag: "rgw") } catch {
            throw RGWProcessError(error.description)
        }
        guard outcome.status == 0 else {
            throw RGWProcessError(
                "scripts/rgw.sh \(arguments.first ?? "") exited \(outcome.status): \(outcome.output.suffix(2000))")
        }
        return outcome.output
    }
}

/// Why the RGW server could not do what was asked.
public struct RGWProcessError: Error, CustomStringConvertible, Sendable {
    /// One line naming the cause and the next step.
    public let description: String
    init(_ description: String) { self.description = description }
}
