import Foundation
import Synchronization
import Testing

/// nginx from Debian (`scripts/install-deps.sh` installs it) on 127.0.0.1 with TLS (h2 and http/1.1 by ALPN),
/// the HTTP peer's test leaf, and `return 204` for every request: it answers before reading a body and then
/// resets the HTTP/2 stream with NO_ERROR (RFC 9113 section 8.1). One per test process: one nginx process in the
/// foreground (`daemon off`, `master_process off`, so Foundation's Process watches it), killed at exit.
final class NginxTestServer: @unchecked Sendable {
    // @unchecked: set once in init, read afterwards; `process` is only signalled.
    let port: Int
    let directory: String
    private let process: Process

    static let shared: Result<NginxTestServer, any Error> = Result { try NginxTestServer() }

    static func get() throws -> NginxTestServer { try shared.get() }

    static let executable: String? = ["/usr/sbin/nginx", "/usr/bin/nginx"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    private init() throws {
        guard let nginx = Self.executable else {
            throw PythonPeer.PeerError(message: "nginx is not installed; run `make test` (scripts/install-deps.sh)")
        }
        let peer = try HTTPPeerProcess.get()
        directory = peer.directory.appendingPathComponent("nginx").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var started: (Int, Process)?
        for attempt in 0..<20 {
            let candidate = 30_000 + Int((getpid() &* 31 &+ Int32(attempt) &* 7_919) % 20_000)
            let configuration = """
                worker_processes 1;
                daemon off;
                master_process off;
                pid \(directory)/nginx.pid;
                error_log \(directory)/error.log;
                events { worker_connections 256; }
                http {
                    access_log off;
                    client_body_temp_path \(directory)/body;
                    proxy_temp_path \(directory)/proxy;
                    fastcgi_temp_path \(directory)/fastcgi;
                    uwsgi_temp_path \(directory)/uwsgi;
                    scgi_temp_path \(directory)/scgi;
                    client_max_body_size 0;
                    server {
                        listen 127.0.0.1:\(candidate) ssl http2;
                        ssl_certificate \(peer.path("server-chain.pem"));
                        ssl_certificate_key \(peer.path("server.key"));
                        location / { return 204; }
                    }
                }

                """
            try configuration.write(toFile: "\(directory)/nginx.conf", atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: nginx)
            process.arguments = ["-p", directory, "-e", "\(directory)/error.log", "-c", "\(directory)/nginx.conf"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Listening once the pid file exists; a taken port makes nginx exit instead.
            var waited = 0
            while process.isRunning && !FileManager.default.fileExists(atPath: "\(directory)/nginx.pid") && waited < 400
            {
                usleep(10_000)
                waited += 1
            }
            if process.isRunning && waited < 400 {
                started = (candidate, process)
                break
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        guard let started else { throw PythonPeer.PeerError(message: "nginx did not start (\(directory)/error.log)") }
        (port, process) = started
        Self.processID.store(process.processIdentifier, ordering: .relaxed)
        // SIGKILL: the test runner's threads block SIGTERM, and a spawned child inherits that mask.
        atexit {
            let pid = NginxTestServer.processID.load(ordering: .relaxed)
            if pid > 0 { kill(pid, SIGKILL) }
        }
    }

    private static let processID = Atomic<Int32>(0)
}
