import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `peers/http_peer.py`: hypercorn (HTTP/1.1, h2c, TLS with ALPN, an expired TLS leaf) and a raw socket server,
/// all on 127.0.0.1, with a PKI made at start. One per test process; it exits when this process closes its stdin.
final class HTTPPeerProcess: @unchecked Sendable {
    // @unchecked: every stored property is set once in init and only read afterwards.
    let directory: URL
    let plain: UInt16
    let tls: UInt16
    let expired: UInt16
    let raw: UInt16
    /// A port that was bound and closed again: nothing listens there.
    let closed: UInt16
    private let process = Process()
    private let input = Pipe()

    static let shared: Result<HTTPPeerProcess, any Error> = Result { try HTTPPeerProcess() }

    static func get() throws -> HTTPPeerProcess { try shared.get() }

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-http-peer-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard FileManager.default.isExecutableFile(atPath: PythonPeer.python) else {
            throw PythonPeer.PeerError(message: "no Python venv at \(PythonPeer.python); run `make test`")
        }
        process.executableURL = URL(fileURLWithPath: PythonPeer.python)
        process.arguments = [
            PythonPeer.packageRoot.appendingPathComponent("Tests/Interop/peers/http_peer.py").path, directory.path,
        ]
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is the ports, printed once every server listens (no sleeping).
        var text = Data()
        while !text.contains(UInt8(ascii: "\n")) {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { throw PythonPeer.PeerError(message: "http_peer.py exited before listening") }
            text.append(data)
        }
        let line = text.prefix { $0 != UInt8(ascii: "\n") }
        let ports = try JSONDecoder().decode([String: UInt16].self, from: Data(line))
        guard let plain = ports["plain"], let tls = ports["tls"], let expired = ports["expired"],
            let raw = ports["raw"], let closed = ports["closed"]
        else { throw PythonPeer.PeerError(message: "http_peer.py printed no ports") }
        (self.plain, self.tls, self.expired, self.raw, self.closed) = (plain, tls, expired, raw, closed)
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
