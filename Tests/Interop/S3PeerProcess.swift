import Foundation

/// `peers/s3_peer.py`: a moto S3 server on 127.0.0.1 with IAM signature checks on, an access key and a bucket.
/// One per test process; it exits when this process closes its stdin. Commands are answered one at a time.
final class S3PeerProcess: @unchecked Sendable {
    // @unchecked: every stored property is set once in init and only read afterwards (the peer locks its pipes).
    let port: UInt16
    let accessKeyID: String
    let secretAccessKey: String
    let bucket: String
    /// Temporary credentials of an assumed role (with a session token).
    let temporary: Started.Temporary
    /// Held for the life of the test process: the peer serves until its stdin closes.
    private let peer: LongRunningPeer

    static let shared: Result<S3PeerProcess, any Error> = Result { try S3PeerProcess() }

    static func get() throws -> S3PeerProcess { try shared.get() }

    struct Started: Decodable {
        struct Temporary: Decodable {
            let accessKeyID: String
            let secretAccessKey: String
            let sessionToken: String
        }
        let temporary: Temporary
        let port: UInt16
        let accessKeyID: String
        let secretAccessKey: String
        let bucket: String
    }

    private init() throws {
        let (peer, started) = try LongRunningPeer.start("s3_peer.py", announcing: Started.self)
        self.peer = peer
        (port, accessKeyID, secretAccessKey, bucket, temporary) =
            (started.port, started.accessKeyID, started.secretAccessKey, started.bucket, started.temporary)
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Sends one command and decodes its one-line answer.
    func command<Answer: Decodable>(_ command: [String: String], as: Answer.Type) throws -> Answer {
        try peer.request(command, as: Answer.self)
    }

    struct Object: Decodable {
        let size: Int?
        let sha256: String?
        let crc32c: UInt32?
        let missing: Bool?
    }

    struct Uploads: Decodable {
        struct Upload: Decodable {
            let key: String
            let uploadId: String
        }
        let uploads: [Upload]
    }

    struct Checksum: Decodable {
        let crc32c: UInt32
        let base64: String
    }

    /// The object as boto3 downloads it: size, SHA-256, CRC32C (PyPI `crc32c`).
    func object(_ key: String) throws -> Object { try command(["op": "get", "key": key], as: Object.self) }

    /// Multipart uploads in progress.
    func uploads() throws -> Uploads { try command(["op": "uploads"], as: Uploads.self) }

    /// The PyPI `crc32c` package's CRC32C of `bytes`, and S3's base64 form of it.
    func crc32c(_ bytes: [UInt8]) throws -> Checksum {
        try command(["op": "crc32c", "hex": bytes.map { String(format: "%02x", $0) }.joined()], as: Checksum.self)
    }
}
