import Foundation
import Testing

/// `peers/round_robin_relay.py` in front of the receivers' ports: each request goes to the next receiver in turn;
/// a receiver that refuses connections is skipped.
final class RoundRobinRelay: Sendable {
    let port: UInt16
    private let peer: LongRunningPeer

    struct Stats: Decodable, Equatable {
        /// Requests relayed to each receiver, in the order of the ports given.
        let requests: [Int]
        /// Connections a receiver refused (the request went to the next one).
        let skipped: Int
        /// Requests that no receiver took.
        let failed: Int
    }

    init(ports: [UInt16]) throws {
        let (peer, ports) = try LongRunningPeer.startListening("round_robin_relay.py", ports.map(String.init))
        self.peer = peer
        port = try ports.port("port")
    }

    var url: String { "http://127.0.0.1:\(port)" }

    var stats: Stats { get throws { try peer.request(["op": "stats"], as: Stats.self) } }
}

/// `peers/s3_blob_peer.py`: moto S3 on 127.0.0.1 without access checks, bucket `aether-fleet`, that can stop
/// answering and come back with its objects.
final class FleetMoto: Sendable {
    let port: UInt16
    let bucket = "aether-fleet"
    private let peer: LongRunningPeer

    private struct Started: Decodable { let port: UInt16 }

    struct Object: Decodable {
        let size: Int?
        let sha256: String?
        let missing: Bool?
    }

    private struct Keys: Decodable { let keys: [String] }
    private struct Stopped: Decodable { let stopped: Bool }
    private struct Restarted: Decodable { let started: Bool }

    init() throws {
        let (peer, started) = try LongRunningPeer.start("s3_blob_peer.py", announcing: Started.self)
        self.peer = peer
        port = started.port
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// The environment `aether serve --blobs s3://` reads its credentials from (moto takes any key).
    static let credentials = [
        "AWS_ACCESS_KEY_ID": "fleet", "AWS_SECRET_ACCESS_KEY": "fleet", "AWS_REGION": "us-east-1",
    ]

    /// Stops answering (connections refused); its objects are kept.
    func stop() throws { _ = try peer.request(["op": "stop"], as: Stopped.self) }
    /// Answers again, on the same port, with the same objects.
    func start() throws { _ = try peer.request(["op": "start"], as: Restarted.self) }
    /// The object as boto3 downloads it.
    func object(_ key: String) throws -> Object {
        try peer.request(["op": "get", "bucket": bucket, "key": key], as: Object.self)
    }
    /// Every key under `prefix`.
    func keys(prefix: String) throws -> [String] {
        try peer.request(["op": "keys", "bucket": bucket, "prefix": prefix], as: Keys.self).keys
    }
}

/// `peers/race_requests.py`: HTTP requests on connections of their own, their last bytes released together.
enum RaceRequests {
    struct Request: Encodable {
        let port: UInt16
        let head: String
        let body: String
    }

    struct Response: Decodable {
        let status: Int
        let headers: [String: String]
    }

    private struct Input: Encodable { let requests: [Request] }
    private struct Output: Decodable { let responses: [Response] }

    /// A request to `port`: `method path`, `fields` and `body`, with Host and Content-Length added.
    static func request(
        port: UInt16, _ method: String, _ path: String, _ fields: [(String, String)], body: [UInt8] = []
    ) -> Request {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        return Request(port: port, head: head, body: body.map { String(format: "%02x", $0) }.joined())
    }

    /// Sends `requests` and returns their responses, in order.
    static func send(_ requests: [Request]) throws -> [Response] {
        let output = try PythonPeer.run("race_requests.py", input: try JSONEncoder().encode(Input(requests: requests)))
        return try JSONDecoder().decode(Output.self, from: output).responses
    }
}
