import AetherIO
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// A moto S3 server for the receiver's tests (`Tests/Interop/peers/s3_blob_peer.py` in the venv `make test`
/// creates), on 127.0.0.1, without access checks: any key pair signs. It can stop refusing connections and serve
/// again with its objects kept. It exits when this object goes (its stdin closes).
final class MotoTestServer: @unchecked Sendable {
    // @unchecked: the pipes are used only under `lock`; everything else is set once in init.
    let port: UInt16
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lock = NSLock()
    private var buffered = Data()

    /// The server every test that does not stop it shares.
    static let shared: Result<MotoTestServer, MotoTestError> = Result { () throws(MotoTestError) in
        try MotoTestServer()
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    init() throws(MotoTestError) {
        let python =
            ProcessInfo.processInfo.environment["AETHER_PYTHON"]
            ?? Self.packageRoot.appendingPathComponent(".venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw MotoTestError("no Python venv at \(python); run `make test` (it creates .venv)")
        }
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Self.packageRoot.appendingPathComponent("Tests/Interop/peers/s3_blob_peer.py").path]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw MotoTestError("cannot start moto: \(error)") }
        struct Started: Decodable { let port: UInt16 }
        var pending = Data()
        port = try Self.decode(Started.self, from: Self.nextLine(output: output, buffered: &pending)).port
        buffered = pending
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// A client of `bucket` (created when missing) on this server.
    func client(bucket: String, retry: S3RetryPolicy = S3RetryPolicy()) async throws -> S3ObjectClient {
        let client = try S3ObjectClient(
            bucket: bucket, endpoint: S3Endpoint(url: endpoint, region: "us-east-1"),
            credentials: S3Credentials(accessKeyID: "test", secretAccessKey: "test"), client: HTTPClient.shared(),
            options: S3Backend.Options(retry: retry, timeouts: HTTPTimeouts(connect: .seconds(5), idle: .seconds(30))))
        try await client.createBucket()
        return client
    }

    /// A store in a new bucket of its own.
    func store(options: S3BlobStore.Options = S3BlobStore.Options(), retry: S3RetryPolicy = S3RetryPolicy())
        async throws -> S3BlobStore
    {
        let bucket = "blobs-" + UUID().uuidString.lowercased().prefix(12)
        return S3BlobStore(
            client: try await client(bucket: String(bucket), retry: retry), prefix: "fleet/a", options: options)
    }

    /// Stops serving: the port refuses connections.
    func stop() throws { _ = try command(["op": "stop"]) }

    /// Serves again on the same port with the same objects.
    func start() throws { _ = try command(["op": "start"]) }

    struct Object: Decodable {
        let size: Int?
        let sha256: String?
        let missing: Bool?
    }

    /// The object as boto3 downloads it.
    func object(bucket: String, key: String) throws -> Object {
        try Self.decode(Object.self, from: command(["op": "get", "bucket": bucket, "key": key]))
    }

    /// Every key under `prefix`, as boto3 lists them.
    func keys(bucket: String, prefix: String) throws -> [String] {
        struct Keys: Decodable { let keys: [String] }
        return try Self.decode(Keys.self, from: command(["op": "keys", "bucket": bucket, "prefix": prefix])).keys
    }

    private func command(_ command: [String: String]) throws -> Data {
        try lock.withLock {
            input.fileHandleForWriting.write(try JSONEncoder().encode(command) + Data([0x0A]))
            return try Self.nextLine(output: output, buffered: &buffered)
        }
    }

    private static func nextLine(output: Pipe, buffered: inout Data) throws(MotoTestError) -> Data {
        while true {
            if let newline = buffered.firstIndex(of: 0x0A) {
                let line = buffered[buffered.startIndex..<newline]
                buffered = Data(buffered[(newline + 1)...])
                return Data(line)
            }
            let more = output.fileHandleForReading.availableData
            guard !more.isEmpty else { throw MotoTestError("moto exited") }
            buffered += more
        }
    }

    private static func decode<T: Decodable>(_: T.Type, from data: Data) throws(MotoTestError) -> T {
        do { return try JSONDecoder().decode(T.self, from: data) } catch {
            throw MotoTestError("moto answered \(String(decoding: data, as: UTF8.self).prefix(200))")
        }
    }

    /// Runs `body` on a thread of its own and awaits it: blocking calls (the blob store's, the engine's over it) run
    /// off Swift's cooperative pool, as they do in the receiver (on libmicrohttpd's threads).
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}

struct MotoTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
