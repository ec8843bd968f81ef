import AetherIO
import AetherSecurity
import Foundation
import Synchronization
import Testing

@testable import AetherTransport

/// The events a `SessionClient` reported, for bounded waits from the test.
final class ClientEvents: Sendable {
    private let events = Mutex<[SessionClient.Event]>([])

    func append(_ event: SessionClient.Event) { events.withLock { $0.append(event) } }

    var all: [SessionClient.Event] { events.withLock { $0 } }

    var sessionsUp: [ReconnectStateMachine.SessionInfo] {
        all.compactMap { if case .up(let info) = $0 { info } else { nil } }
    }

    var records: [String] {
        all.compactMap { if case .record(_, let bytes) = $0 { String(decoding: bytes, as: UTF8.self) } else { nil } }
    }

    var downs: Int { all.count { if case .down = $0 { true } else { false } } }

    var counts: CountsAnswer? {
        all.compactMap { if case .counts(let answer) = $0 { answer } else { nil } }.last
    }
}

extension SessionClient {
    /// A client on a fresh loopback socket, logging its events.
    static func live(host: UDPAddress, key: PairedKey, log: ClientEvents) throws -> SessionClient {
        let socket = try UDPSocket(binding: .loopback(port: 0))
        let client = SessionClient(socket: socket, host: host, keys: [key.id: key.key]) { log.append($0) }
        try client.start()
        return client
    }
}
