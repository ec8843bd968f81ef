import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server from Debian's `postgresql` for the tests and the bench: `initdb` run as the `postgres` user
/// (it refuses root) in a temporary directory made for that user, listening only on a Unix socket in that
/// directory. A watchdog stops it and removes the directory when the creating process ends, however it ends.
public final class PostgresProcess: Sendable {
    /// The directory: `data/` (the cluster), the socket and `server.log`.
    public let directory: String
    private var data: String { directory + "/data" }

    /// Whether Debian's server binaries are installed (`make deps` installs `postgresql`).
    public static var isInstalled: Bool { binary("initdb") != "initdb" }

    /// Initialises a new cluster and starts it.
    public init() throws(PostgresProcessError) {
        // Short: the socket's path must fit in sun_path.
        directory = "/tmp/aether-pg-" + UUID().uuidString.prefix(8).lowercased()
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch { throw PostgresProcessError("cannot make \(directory): \(error)") }
        try Self.run("/bin/chown", ["postgres:postgres", directory])
        try Self.run(
            "/usr/sbin/runuser",
            [
                "-u", "postgres", "--", Self.binary("initdb"), "-D", directory + "/data", "--auth=trust", "-U",
                "postgres", "-E", "UTF8", "--no-sync",
            ])
        try start()
        // The watchdog: once this process is gone, stop the server and remove its directory.
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = [
            "-c",
            "while kill -0 \"$1\" 2>/dev/null; do sleep 1; done; "
                + "/usr/sbin/runuser -u postgres -- \"$2\" -D \"$3/data\" -m immediate stop >/dev/null 2>&1; "
                + "rm -rf \"$3\"",
            "watchdog", "\(getpid())", Self.binary("pg_ctl"), directory,
        ]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        do { try watchdog.run() } catch { throw PostgresProcessError("cannot start the watchdog: \(error)") }
    }

    /// `pg_ctl start`, waiting until it accepts connections.
    public func start() throws(PostgresProcessError) {
        try Self.run(
            "/usr/sbin/runuser",
            [
                "-u", "postgres", "--", Self.binary("pg_ctl"), "-D", data, "-l", directory + "/server.log", "-w",
                "-o", "-k \(directory) -c listen_addresses='' -c fsync=off -c max_connections=200", "start",
            ])
    }

    /// `pg_ctl stop -m immediate`: like a crash of the server (connections cut, WAL replayed at the next start).
    public func stop() throws(PostgresProcessError) {
        try Self.run(
            "/usr/sbin/runuser",
            ["-u", "postgres", "--", Self.binary("pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"])
    }

    /// A new empty database; returns its libpq URL (socket in `directory`, user `postgres`).
    public func createDatabase() throws(PostgresProcessError) -> String {
        let name = "aether_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try Self.run(Self.binary("createdb"), ["-h", directory, "-U", "postgres", name])
        return url(database: name)
    }

    /// The URL of `database`.
    public func url(database: String) -> String {
        "postgresql:///\(database)?host=\(directory)&user=postgres"
    }

    /// Runs SQL through `psql` (for a test's own changes: a newer schema row, a dropped table).
    public func psql(_ database: String, _ sql: String) throws(PostgresProcessError) {
        try Self.run(
            Self.binary("psql"),
            ["-h", directory, "-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-qc", sql])
    }

    private static func binary(_ name: String) -> String {
        for directory in ["/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/bin"]
        where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
            return directory + "/" + name
        }
        return name
    }

    private static func run(_ executable: String, _ arguments: [String]) throws(PostgresProcessError) {
        let outcome: DaemonCommand.Outcome
        do { outcome = try DaemonCommand.run(executable, arguments, tag: "pg") } catch {
            throw PostgresProcessError("\(error.description) (make deps installs postgresql)")
        }
        guard outcome.status == 0 else {
            throw PostgresProcessError(
                "\(executable) \(arguments.first ?? "") exited \(outcome.status): \(outcome.output)")
        }
    }
}

/// Why the PostgreSQL server could not do what was asked.
public struct PostgresProcessError: Error, CustomStringConvertible, Sendable {
    /// One line naming the cause and the next step.
    public let description: String
    init(_ description: String) { self.description = description }
}
