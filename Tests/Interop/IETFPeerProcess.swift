import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `peers/ietf_peer.py`: an IETF resumable upload server speaking interop versions 6 and 8 on 127.0.0.1, storing
/// uploads under a temporary directory. One per test process; it exits when this process closes its stdin.
final class IETFPeerProcess: @unchecked Sendable {
    // @unchecked: every stored property is set once in init and only read afterwards.
    let directory: URL
    let port: UInt16
    private let process = Process()
    private let input = Pipe()

    static let shared: Result<IETFPeerProcess, any Error> = Result { try IETFPeerProcess() }

    static func get() throws -> IETFPeerProcess { try shared.get() }

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-ietf-peer-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard FileManager.default.isExecutableFile(atPath: PythonPeer.python) else {
            throw PythonPeer.PeerError(message: "no Python venv at \(PythonPeer.python); run `make test`")
        }
        process.executableURL = URL(fileURLWithPath: PythonPeer.python)
        process.arguments = [
            PythonPeer.packageRoot.appendingPathComponent("Tests/Interop/peers/ietf_peer.py").path, directory.path,
        ]
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is the port, printed once the server listens (no sleeping).
        var text = Data()
        while !text.contains(UInt8(ascii: "\n")) {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { throw PythonPeer.PeerError(message: "ietf_peer.py exited before listening") }
            text.append(data)
        }
        let line = text.prefix { $0 != UInt8(ascii: "\n") }
        let ports = try JSONDecoder().decode([String: UInt16].self, from: Data(line))
        guard let port = ports["port"] else { throw PythonPeer.PeerError(message: "ietf_peer.py printed no port") }
        self.port = port
    }

    /// The creation URL of `mode` (see the peer's docstring).
    func creationURL(_ mode: String) -> String { "http://127.0.0.1:\(port)/create/\(mode)" }

    /// The bytes stored for the upload at `location`, nil when the server holds no such upload.
    func stored(_ location: String) -> [UInt8]? {
        guard let id = location.split(separator: "/").last else { return nil }
        return try? Array(Data(contentsOf: directory.appendingPathComponent("uploads/\(id)")))
    }
}

/// One request the peer saw.
struct IETFLoggedRequest: Decodable {
    let method: String
    let path: String
    let version: String?
    let complete: String?
    let offset: String?
    let length: String?
    let contentType: String?
    let contentDigest: String?
    let reprDigest: String?
    let contentLength: String?
    /// The upload id a creation request made.
    let created: String?

    enum CodingKeys: String, CodingKey {
        case method, path
        case version = "Upload-Draft-Interop-Version"
        case complete = "Upload-Complete"
        case offset = "Upload-Offset"
        case length = "Upload-Length"
        case contentType = "Content-Type"
        case contentDigest = "Content-Digest"
        case reprDigest = "Repr-Digest"
        case contentLength = "Content-Length"
        case created
    }
}
