import AetherIO
import Synchronization

@testable import AetherTransport

/// A scripted native receiver for `NativeBackend`: each request is recorded and answered by `respond`.
final class ScriptedNativeReceiver: Sendable {
    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders = HTTPHeaders()
        var body: [UInt8] = []
    }

    typealias Responder = @Sendable (HTTPRequest) -> Answer

    private let state: Mutex<[HTTPRequest]> = Mutex([])
    private let respond: Responder

    init(_ respond: @escaping Responder) { self.respond = respond }

    /// Answers requests in order from `answers`.
    convenience init(answers: [Answer]) {
        let queue = Mutex(answers)
        self.init { _ in queue.withLock { $0.isEmpty ? Answer(status: 599) : $0.removeFirst() } }
    }

    var requests: [HTTPRequest] { state.withLock { $0 } }

    func send(_ request: HTTPRequest) -> HTTPResponse {
        state.withLock { $0.append(request) }
        let answer = respond(request)
        return HTTPResponse(
            status: answer.status, headers: answer.headers, informational: [], body: answer.body,
            telemetry: HTTPTelemetry(
                protocolVersion: .http1, nameLookup: .zero, connect: .zero, tlsHandshake: .zero, firstByte: .zero,
                total: .zero, bytesSent: 0, bytesReceived: 0, headerBytesReceived: 0, connectionReused: false))
    }

    static let creationURL = "http://127.0.0.1:9/uploads"

    func backend(
        server: AetherCapabilities = AetherCapabilities(minimumChunkSize: 16 << 10),
        options: NativeBackendOptions = NativeBackendOptions()
    ) throws(TransportError) -> NativeBackend {
        try NativeBackend(
            creationURL: Self.creationURL, server: server, options: options,
            transport: { (request) async throws(TransportError) -> HTTPResponse in self.send(request) })
    }

    static func problem(_ name: String, _ status: Int, chunk: Int? = nil) -> Answer {
        Answer(
            status: status, headers: ["Content-Type": AetherWire.problemMediaType],
            body: ProblemDocument(name: name, title: name, status: status, detail: "detail", chunk: chunk).jsonBytes)
    }
}
