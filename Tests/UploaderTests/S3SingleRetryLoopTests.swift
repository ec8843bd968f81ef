import AetherIO
import AetherScheduling
import AetherTestSupport
import Synchronization
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// One retry loop: the S3 backend sends each request once and the uploader's policy retries. With the backend's
/// own loop under the uploader's (5 x 8 by default), a part failing with 500 was sent 40 times and the circuit
/// breaker counted 8.
@Suite struct S3SingleRetryLoopTests {
    /// A file of one part goes as one PutObject; a larger one as a multipart upload (created once).
    @Test(arguments: [100_000, (11 << 20) + 7])
    func aPartFailingWith500IsSentExactlyTheUploadersAttempts(size: Int) async throws {
        let fixture = try UploadFixture(bytes: UploadFixture.seeded(size, seed: 51))
        defer { fixture.clean() }
        let sends = Mutex<[String: Int]>([:])
        let backend = try S3Backend(
            destination: S3Destination(bucket: "bucket", key: "dir/object.bin"),
            endpoint: S3Endpoint(url: "http://127.0.0.1:9", region: "us-east-1"), flavor: .aws,
            credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "SECRET/KEY+value"),
            options: S3Backend.Options(),
            transport: { (request) async throws(TransportError) -> HTTPResponse in
                let what = "\(request.method) \(request.url.split(separator: "?").dropFirst().first ?? "")"
                sends.withLock { $0[what, default: 0] += 1 }
                if request.method == "POST", request.url.hasSuffix("?uploads") {
                    return Self.answer(
                        200,
                        "<InitiateMultipartUploadResult><Bucket>bucket</Bucket><Key>dir/object.bin</Key>"
                            + "<UploadId>u1</UploadId></InitiateMultipartUploadResult>")
                }
                if request.method == "DELETE" { return Self.answer(204, "") }
                return Self.answer(500, "<Error><Code>InternalError</Code><Message>down</Message></Error>")
            })
        #expect(backend.options.retry.maximumAttempts == 1)
        let uploader = ChunkedUploader(
            target: .init(file: FilePath(fixture.file), destination: "s3://bucket/dir/object.bin", mode: .s3Multipart),
            backend: backend, snapshots: try fixture.store(), snapshotKey: "s3-one-loop",
            configuration: UploadConfiguration(
                chunkSize: 5 << 20, parallel: 1, maximumAttempts: 3, initialBackoff: 0.001, maximumBackoff: 0.004),
            breaker: UploadCircuitBreaker(configuration: UploadFixture.lenientBreaker))
        let error = await #expect(throws: UploaderError.self) { try await uploader.run { _ in } }
        #expect(error?.code == .transportFailed)
        #expect(error?.message.contains("after 3 attempt(s)") == true)
        let puts = sends.withLock { $0.filter { $0.key.hasPrefix("PUT ") } }
        #expect(puts.values.max() == 3)
        #expect(puts.values.allSatisfy { $0 <= 3 })
        let creations = sends.withLock { $0.filter { $0.key.hasPrefix("POST ") }.values.reduce(0, +) }
        #expect(creations == (size > 5 << 20 ? 1 : 0))
    }

    static func answer(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: HTTPHeaders(), informational: [], body: Array(body.utf8),
            telemetry: HTTPTelemetry(
                protocolVersion: .http1, nameLookup: .zero, connect: .zero, tlsHandshake: .zero, firstByte: .zero,
                total: .zero, bytesSent: 0, bytesReceived: 0, headerBytesReceived: 0, connectionReused: false))
    }
}
