import AetherIO
import Synchronization

/// One request in flight: the request, the body cursor libcurl's read callback pulls from, the response being
/// assembled by the header and write callbacks, and the continuation of the task that waits for it.
final class HTTPTransfer: @unchecked Sendable {
    // @unchecked: everything but `completion` and `cancelRequested` is touched only on the client's thread
    // (from `HTTPEventLoop.run` and the libcurl callbacks it drives).

    /// What the read callback should do next.
    enum BodyRegion {
        case bytes(HTTPBodyPiece, offset: Int)
        case pause
        case end
        case abort
    }

    let id: UInt64
    let request: HTTPRequest
    let cancelRequested = Atomic<Bool>(false)
    private let completion = Mutex<CheckedContinuation<Result<HTTPResponse, TransportError>, Never>?>(nil)

    var parser: HTTPResponseHeadParser
    var responseBody: [UInt8] = []
    /// The answer's deadlines, fed by the callbacks and the loop's turns.
    var deadline: HTTPAnswerDeadline
    /// Whether the whole request body has been handed to libcurl (from the start when there is none).
    private(set) var bodyHandedOver: Bool
    /// Monotonic seconds for the deadlines.
    let clock: any AetherClock
    /// Set by a callback that stopped the transfer, so the error says why rather than libcurl's generic code.
    var failure: TransportError?
    var easy: CurlEasy?

    private let stream: HTTPBodyStream?
    private var pieces: [HTTPBodyPiece]
    private var pieceIndex = 0
    private var current: HTTPBodyPiece?
    private var offset = 0

    init(id: UInt64, request: HTTPRequest, maximumHeaderBytes: Int, clock: any AetherClock = SystemClock()) {
        self.id = id
        self.request = request
        self.clock = clock
        parser = HTTPResponseHeadParser(limit: maximumHeaderBytes)
        deadline = HTTPAnswerDeadline(request.timeouts, bodyLimit: request.responseBodyLimit)
        bodyHandedOver = !request.sendsBody
        switch request.body.storage {
        case .none:
            stream = nil
            pieces = []
        case .pieces(let list, _):
            stream = nil
            pieces = list
        case .stream(let bodyStream):
            stream = bodyStream
            pieces = []
        }
    }

    var bodyStream: HTTPBodyStream? { stream }

    /// Installs the continuation; false if the transfer already finished (cannot happen before it is submitted).
    func install(_ continuation: CheckedContinuation<Result<HTTPResponse, TransportError>, Never>) {
        completion.withLock { $0 = continuation }
    }

    /// Resumes the waiting task once; later calls do nothing.
    func finish(_ result: Result<HTTPResponse, TransportError>) {
        let continuation = completion.withLock {
            slot -> CheckedContinuation<Result<HTTPResponse, TransportError>, Never>? in
            defer { slot = nil }
            return slot
        }
        stream?.close()
        continuation?.resume(returning: result)
    }

    // MARK: Callbacks (client thread)

    func nextBodyRegion() -> BodyRegion {
        while true {
            if let piece = current, offset < piece.count { return .bytes(piece, offset: offset) }
            current = nil
            offset = 0
            if let stream {
                switch stream.next() {
                case .piece(let piece, _): current = piece
                case .waiting: return .pause
                case .finished:
                    bodyHandedOver = true
                    return .end
                case .failed(let error):
                    failure = error
                    return .abort
                }
            } else {
                guard pieceIndex < pieces.count else {
                    bodyHandedOver = true
                    return .end
                }
                current = pieces[pieceIndex]
                pieceIndex += 1
            }
        }
    }

    func advanceBody(by count: Int) { offset += count }

    /// A header line (status line, field, or the empty line); false stops the transfer.
    func receiveHeader(_ line: [UInt8]) -> Bool {
        deadline.answerStarted(at: clock.monotonicSeconds())
        let outcome = parser.consume(line: line)
        if let head = parser.head {
            deadline.headEnded(contentLength: head.headers["Content-Length"].flatMap { Int($0) })
        }
        switch outcome {
        case .accepted: return true
        case .tooManyInformational:
            failure = TransportError(
                .protocolViolation,
                "the server sent more than \(HTTPResponseHeadParser.maximumInformational) informational (1xx) answers "
                    + "before a final one")
            return false
        case .tooLarge:
            failure = TransportError(
                .headerTooLarge, "the response headers exceed \(parser.limit) bytes")
            return false
        case .malformed(let reason):
            failure = TransportError(.protocolViolation, "malformed response header: \(reason)")
            return false
        }
    }

    /// Why the answer is past its deadline at this turn of the loop, or nil. `queued` says whether the request's
    /// bytes still wait in the socket's send queue; `started`, whether libcurl has begun sending the request.
    func overdue(started: Bool, queued: Bool) -> String? {
        let now = clock.monotonicSeconds()
        if bodyHandedOver, started { deadline.sending(at: now, queued: queued) }
        return deadline.overdue(at: now, informational: parser.informational.count, bodyBytes: responseBody.count)
    }

    /// Room for `count` more body bytes; false (with the failure recorded) when the limit would be passed.
    func acceptsBody(count: Int) -> Bool {
        guard responseBody.count + count <= request.responseBodyLimit else {
            failure = TransportError(
                .responseTooLarge, "the response body exceeds the limit of \(request.responseBodyLimit) bytes")
            return false
        }
        return true
    }
}
