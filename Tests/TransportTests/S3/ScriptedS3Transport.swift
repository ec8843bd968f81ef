import AetherIO
import AetherTestSupport
import Synchronization

@testable import AetherTransport

/// A scripted server for `S3Backend`: answers requests in order from a list, records what was sent and every
/// back-off delay. Running past the script is a `.connectionRefused`.
final class ScriptedS3Transport: Sendable {
    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders = HTTPHeaders()
        var body: String = ""
    }

    private struct State {
        var answers: [Answer]
        var requests: [HTTPRequest] = []
        var sleeps: [Duration] = []
    }

    private let state: Mutex<State>

    init(_ answers: [Answer]) { state = Mutex(State(answers: answers)) }

    var requests: [HTTPRequest] { state.withLock { $0.requests } }
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        let answer = state.withLock { state -> Answer? in
            state.requests.append(request)
            return state.answers.isEmpty ? nil : state.answers.removeFirst()
        }
        guard let answer else { throw TransportError(.connectionRefused, "the script has no more answers") }
        return HTTPResponse(
            status: answer.status, headers: answer.headers, informational: [], body: Array(answer.body.utf8),
            telemetry: HTTPTelemetry(
                protocolVersion: .http1, nameLookup: .zero, connect: .zero, tlsHandshake: .zero, firstByte: .zero,
                total: .zero, bytesSent: 0, bytesReceived: 0, headerBytesReceived: 0, connectionReused: false))
    }

    func backend(
        key: String = "dir/object.bin", retry: S3RetryPolicy = S3RetryPolicy(maximumAttempts: 3),
        secret: String = "SECRET/KEY+value", listPartsPageSize: Int = 1000, flavor: S3Flavor = .aws,
        payloadSigning: S3Backend.PayloadSigning = .signed
    ) throws -> S3Backend {
        try S3Backend(
            destination: S3Destination(bucket: "bucket", key: key),
            endpoint: S3Endpoint(url: "http://127.0.0.1:9000", region: "us-east-1"), flavor: flavor,
            credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: secret),
            options: S3Backend.Options(
                payloadSigning: payloadSigning, retry: retry, listPartsPageSize: listPartsPageSize),
            transport: { (request) async throws(TransportError) -> HTTPResponse in try self.send(request) },
            clock: ManualClock(wall: .seconds(1_440_938_160)),
            sleep: { duration in
                self.state.withLock { $0.sleeps.append(duration) }
                return true
            },
            random: { 0.5 })
    }

    static func error(_ code: String, _ message: String = "detail", status: Int) -> Answer {
        Answer(
            status: status,
            body: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(code)</Code><Message>\(message)</Message>"
                + "<RequestId>REQ1</RequestId></Error>")
    }
}
