import Foundation

/// `peers/ietf_peer.py`: an IETF resumable upload server speaking interop versions 6 and 8 on 127.0.0.1, storing
/// uploads under a temporary directory. One per test process; it exits when this process closes its stdin.
final class IETFPeerProcess: @unchecked Sendable {
    // @unchecked: every stored property is set once in init and only read afterwards.
    let directory: URL
    let port: UInt16
    /// Held for the life of the test process: the peer serves until its stdin closes.
    private let peer: LongRunningPeer

    static let shared: Result<IETFPeerProcess, any Error> = Result { try IETFPeerProcess() }

    static func get() throws -> IETFPeerProcess { try shared.get() }

    private init() throws {
        directory = try LongRunningPeer.makeDirectory("ietf")
        let (peer, ports) = try LongRunningPeer.startListening("ietf_peer.py", [directory.path])
        self.peer = peer
        port = try ports.port("port")
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
