import AetherTestSupport
import Foundation

/// The test process's Ceph RGW (AetherTestSupport' `RGWProcess`, one start per test process) with the buckets the
/// suites use, and a boto3 client of it (`peers/s3_inspect.py`) that reads back what Aether stored.
final class RGWPeer: Sendable {
    /// The S3 backend suite's bucket.
    static let bucket = "aether-test"
    /// The fleet suites' bucket.
    static let fleetBucket = "aether-fleet"

    let server: RGWProcess
    private let inspector: LongRunningPeer

    static let shared: Result<RGWPeer, any Error> = Result { try RGWPeer() }

    /// The shared server, started on first use.
    static func get() throws -> RGWPeer { try shared.get() }

    private struct Ready: Decodable { let ready: Bool }

    private init() throws {
        server = try RGWProcess(buckets: [Self.bucket, Self.fleetBucket])
        (inspector, _) = try LongRunningPeer.start(
            "s3_inspect.py", [server.endpoint, server.accessKeyID, server.secretAccessKey], announcing: Ready.self)
    }

    var endpoint: String { server.endpoint }
    var port: UInt16 { server.port }

    struct Object: Decodable {
        let size: Int?
        let sha256: String?
        let crc32c: UInt32?
        let etag: String?
        let missing: Bool?
    }

    private struct Keys: Decodable { let keys: [String] }

    struct Uploads: Decodable {
        struct Upload: Decodable {
            let key: String
            let uploadId: String
        }
        let uploads: [Upload]
    }

    struct Refusal: Decodable {
        let status: Int
        let code: String
    }

    /// The object as boto3 downloads it.
    func object(_ key: String, bucket: String = RGWPeer.bucket) throws -> Object {
        try inspector.request(["op": "get", "bucket": bucket, "key": key], as: Object.self)
    }

    /// Every key under `prefix`.
    func keys(prefix: String, bucket: String = RGWPeer.fleetBucket) throws -> [String] {
        try inspector.request(["op": "keys", "bucket": bucket, "prefix": prefix], as: Keys.self).keys
    }

    /// Multipart uploads in progress.
    func uploads(bucket: String = RGWPeer.bucket) throws -> Uploads {
        try inspector.request(["op": "uploads", "bucket": bucket], as: Uploads.self)
    }

    /// The answer to a PutObject whose CRC32C travels in a trailer (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`).
    func trailerPut(_ key: String, bucket: String = RGWPeer.bucket) throws -> Refusal {
        try inspector.request(["op": "trailer", "bucket": bucket, "key": key], as: Refusal.self)
    }
}
