import AetherIO
import AetherSecurity
import Foundation
import Synchronization
import Testing

@testable import AetherTransport

/// A host process started with `aether session host` on a free loopback port.
struct HostProcess {
    let process: AetherProcess
    let address: UDPAddress

    init(stateDir: String, extra: [String] = []) throws {
        let port = try SessionLive.freePort()
        address = .loopback(port: port)
        process = try AetherProcess(
            ["session", "host", "--port", "\(port)", "--echo", "--state-dir", stateDir] + extra)
        let process = process
        try SessionLive.wait("the host to listen") { process.stderr.contains("listening on") }
    }
}
