import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's nginx on 127.0.0.1, in the foreground (`daemon off`, `master_process off`): the one process is the
/// worker, so its pid is the process that serves, its CPU time is the server's, and killing it stops nginx.
/// The one launcher behind `aether-bench` (transport, receiver) and the interop tests; the caller gives the body
/// of the `http { }` block for the ports picked, and the launcher adds the paths, logs and pid file.
public final class NginxProcess: Sendable {
    /// The ports it listens on (as many as asked for), in the order given to `httpBlock`.
    public let ports: [Int]
    /// Its prefix directory (configuration, logs, temporary bodies).
    public let directory: String
    /// The nginx process (the only one: no master).
    public let processID: Int32
    private let process: Process

    /// The nginx executable, if installed (`scripts/install-deps.sh` installs it).
    public static let executable: String? = ["/usr/sbin/nginx", "/usr/bin/nginx"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Starts nginx with `httpBlock(ports)` inside `http { }`, trying port sets keyed on `seed` and the pid until
    /// one is free (a taken port makes nginx exit), and returns once it listens (its pid file exists).
    public init(
        directory: String, portCount: Int = 1, seed: Int = 30_000, httpBlock: ([Int]) -> String
    ) throws {
        guard let nginx = Self.executable else {
            throw NginxProcessError("nginx is not installed; run scripts/install-deps.sh (make deps)")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        let pidFile = "\(directory)/nginx.pid"
        for attempt in 0..<20 {
            let base = seed + Int((getpid() &* 7_919 &+ Int32(attempt) &* 104_729) % 10_000) * portCount
            let candidates = (0..<portCount).map { base + $0 }
            try? FileManager.default.removeItem(atPath: pidFile)
            let configuration = """
                worker_processes 1;
                daemon off;
                master_process off;
                pid \(pidFile);
                error_log \(directory)/error.log;
                events { worker_connections 1024; }
                http {
                    access_log off;
                    client_body_temp_path \(directory)/body;
                    proxy_temp_path \(directory)/proxy;
                    fastcgi_temp_path \(directory)/fastcgi;
                    uwsgi_temp_path \(directory)/uwsgi;
                    scgi_temp_path \(directory)/scgi;
                \(httpBlock(candidates))
                }

                """
            try configuration.write(toFile: "\(directory)/nginx.conf", atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: nginx)
            process.arguments = ["-p", directory, "-e", "\(directory)/error.log", "-c", "\(directory)/nginx.conf"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            var waited = 0
            while process.isRunning && !FileManager.default.fileExists(atPath: pidFile) && waited < 400 {
                usleep(10_000)
                waited += 1
            }
            if process.isRunning && waited < 400 {
                ports = candidates
                self.process = process
                processID = process.processIdentifier
                return
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        throw NginxProcessError("nginx did not start (see \(directory)/error.log)")
    }

    /// The first port.
    public var port: Int { ports[0] }

    /// User + system CPU seconds nginx has used so far (from `/proc/PID/stat`), or nil once it is gone.
    public func cpuSeconds() -> Double? { ProcessCPU.seconds(processID: processID) }

    /// Stops nginx (SIGKILL: a test runner's threads block SIGTERM, and a spawned child inherits that mask) and
    /// waits for it.
    public func stop() {
        guard process.isRunning else { return }
        kill(processID, SIGKILL)
        process.waitUntilExit()
    }
}
