import AetherTestSupport
import AetherTransport
import Foundation
import Testing

/// An S3 server the backend suites run against: Ceph RGW (which checks SigV4, the signed payload SHA-256, MD5 and
/// part sizes as S3 does) and moto (which checks signatures and session tokens, and almost nothing else).
enum S3Server: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case rgw, moto

    var testDescription: String { rawValue }

    /// What the server checks, as the backend is told: Ceph for RGW; moto checks no part's bytes.
    var flavor: S3Flavor { self == .rgw ? .ceph : .unknown }

    /// The shared server, started on first use, seen through one interface.
    func peer() throws -> S3TestPeer {
        switch self {
        case .rgw:
            let rgw = try RGWPeer.get()
            return S3TestPeer(
                server: self, port: rgw.port, accessKeyID: rgw.server.accessKeyID,
                secretAccessKey: rgw.server.secretAccessKey, bucket: RGWPeer.bucket,
                object: { key in
                    let object = try rgw.object(key)
                    return .init(
                        size: object.size, sha256: object.sha256, crc32c: object.crc32c, missing: object.missing)
                }, uploads: { try rgw.uploads().uploads.map { ($0.key, $0.uploadId) } })
        case .moto:
            let moto = try S3PeerProcess.get()
            return S3TestPeer(
                server: self, port: moto.port, accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey,
                bucket: moto.bucket,
                object: { key in
                    let object = try moto.object(key)
                    return .init(
                        size: object.size, sha256: object.sha256, crc32c: object.crc32c, missing: object.missing)
                }, uploads: { try moto.uploads().uploads.map { ($0.key, $0.uploadId) } })
        }
    }
}

/// One S3 server of the backend suites: where it is, its credentials and bucket, and boto3's view of what it holds.
struct S3TestPeer: Sendable {
    struct Object {
        let size: Int?
        let sha256: String?
        let crc32c: UInt32?
        let missing: Bool?
    }

    let server: S3Server
    let port: UInt16
    let accessKeyID: String
    let secretAccessKey: String
    let bucket: String
    /// The object as boto3 downloads it.
    let object: @Sendable (String) throws -> Object
    /// The multipart uploads in progress: key and upload id.
    let uploads: @Sendable () throws -> [(key: String, uploadID: String)]

    var endpoint: String { "http://127.0.0.1:\(port)" }
    var flavor: S3Flavor { server.flavor }

    /// An object client of the peer's bucket.
    func objectClient(_ client: HTTPClient) throws -> S3ObjectClient {
        try S3ObjectClient(
            bucket: bucket, endpoint: S3Endpoint(url: endpoint, region: "us-east-1"),
            credentials: S3Credentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey), client: client)
    }
}
