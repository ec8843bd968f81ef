import Foundation

/// `peers/http_peer.py`: hypercorn (HTTP/1.1, h2c, TLS with ALPN, an expired TLS leaf), a raw socket server and a raw h2c server,
/// all on 127.0.0.1, with a PKI made at start. One per test process; it exits when this process closes its stdin.
final class HTTPPeerProcess: @unchecked Sendable {
    // @unchecked: every stored property is set once in init and only read afterwards.
    let directory: URL
    let plain: UInt16
    let tls: UInt16
    let expired: UInt16
    let raw: UInt16
    /// h2c with prior knowledge that sends 104 and 103 HEADERS frames before every final answer.
    let h2raw: UInt16
    /// A port that was bound and closed again: nothing listens there.
    let closed: UInt16
    /// Held for the life of the test process: the peer serves until its stdin closes.
    private let peer: LongRunningPeer

    static let shared: Result<HTTPPeerProcess, any Error> = Result { try HTTPPeerProcess() }

    static func get() throws -> HTTPPeerProcess { try shared.get() }

    private init() throws {
        directory = try LongRunningPeer.makeDirectory("http")
        let (peer, ports) = try LongRunningPeer.startListening("http_peer.py", [directory.path])
        self.peer = peer
        (plain, tls, expired) = try (ports.port("plain"), ports.port("tls"), ports.port("expired"))
        (raw, h2raw, closed) = try (ports.port("raw"), ports.port("h2raw"), ports.port("closed"))
    }

    func url(_ port: UInt16, _ path: String, tls: Bool = false, host: String = "127.0.0.1") -> String {
        "\(tls ? "https" : "http")://\(host):\(port)\(path)"
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
}

/// What the hypercorn app answers: what it received.
struct PeerEcho: Decodable {
    let method: String
    let path: String
    let length: Int
    let sha256: String
    let client_port: Int?
    let http_version: String
    let expect: String?
    let content_length: String?
    let transfer_encoding: String?
    let x_test: String?
}
