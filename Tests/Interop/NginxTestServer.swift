import AetherTestSupport
import Foundation
import Synchronization
import Testing

/// nginx from Debian (`scripts/install-deps.sh` installs it) on 127.0.0.1 with TLS (h2 and http/1.1 by ALPN),
/// the HTTP peer's test leaf, and `return 204` for every request: it answers before reading a body and then
/// resets the HTTP/2 stream with NO_ERROR (RFC 9113 section 8.1). One per test process: one nginx process in the
/// foreground (`NginxProcess`, the launcher the bench uses too), killed at exit.
final class NginxTestServer: @unchecked Sendable {
    // @unchecked: set once in init, read afterwards.
    let port: Int
    let directory: String
    private let server: NginxProcess

    static let shared: Result<NginxTestServer, any Error> = Result { try NginxTestServer() }

    static func get() throws -> NginxTestServer { try shared.get() }

    static let executable: String? = NginxProcess.executable

    private init() throws {
        let peer = try HTTPPeerProcess.get()
        let server = try NginxProcess(directory: peer.directory.appendingPathComponent("nginx").path) { ports in
            """
                client_max_body_size 0;
                server {
                    listen 127.0.0.1:\(ports[0]) ssl http2;
                    ssl_certificate \(peer.path("server-chain.pem"));
                    ssl_certificate_key \(peer.path("server.key"));
                    location / { return 204; }
                }
            """
        }
        (port, directory, self.server) = (server.port, server.directory, server)
        Self.processID.store(server.processID, ordering: .relaxed)
        // SIGKILL at exit: the test runner's threads block SIGTERM, and a spawned child inherits that mask.
        atexit {
            let pid = NginxTestServer.processID.load(ordering: .relaxed)
            if pid > 0 { kill(pid, SIGKILL) }
        }
    }

    private static let processID = Atomic<Int32>(0)
}
