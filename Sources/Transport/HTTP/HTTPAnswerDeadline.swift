/// The answer's deadlines of one transfer (`HTTPTimeouts.firstByte`, `answer`, `minimumAnswerBytesPerSecond`):
/// events in (the request has been sent, the first byte and the end of the head arrived), a verdict out. Pure: the
/// event loop feeds it monotonic seconds and asks it once a turn (at least once a second), so it is tested with
/// plain numbers.
struct HTTPAnswerDeadline {
    private let firstByte: Double?
    private let answer: Double?
    private let rate: Double
    private let bodyLimit: Int
    /// When the request was last seen still leaving (its body handed over, bytes left in the socket's queue), or
    /// first seen gone: the deadlines count from here.
    private(set) var sentAt: Double?
    private var firstByteAt: Double?
    private var expectedBody: Int?

    init(_ timeouts: HTTPTimeouts, bodyLimit: Int) {
        firstByte = timeouts.firstByte.map(HTTPTimeouts.interval)
        answer = timeouts.answer.map(HTTPTimeouts.interval)
        rate = Double(timeouts.minimumAnswerBytesPerSecond)
        self.bodyLimit = max(0, bodyLimit)
    }

    /// The request has been handed over entirely; `queued` says whether bytes still wait in the socket's send
    /// queue at `now` (they are the request's, still leaving: the deadlines start once the queue is seen empty).
    mutating func sending(at now: Double, queued: Bool) {
        if queued || sentAt == nil { sentAt = now }
    }

    /// The first byte of the answer arrived at `now` (later calls change nothing).
    mutating func answerStarted(at now: Double) {
        if firstByteAt == nil { firstByteAt = now }
    }

    /// The final head ended: the body is given time for `contentLength` bytes (its declared length, within the
    /// limit), or for the whole response body limit when none is declared.
    mutating func headEnded(contentLength: Int?) {
        guard expectedBody == nil else { return }
        expectedBody = min(max(0, contentLength ?? bodyLimit), bodyLimit)
    }

    /// Why the answer is too late at `now`, or nil. `informational` (1xx answers so far) and `bodyBytes` only go
    /// into the message.
    func overdue(at now: Double, informational: Int, bodyBytes: Int) -> String? {
        // An answer that starts before the request was all sent (an early refusal) counts from its first byte.
        guard let start = sentAt ?? firstByteAt else { return nil }
        if firstByteAt == nil, let firstByte, now - start > firstByte {
            return "no answer within \(Self.shown(firstByte)) s after the request was sent"
        }
        guard let answer else { return nil }
        guard let expectedBody else {
            guard now - start > answer else { return nil }
            let interim = informational > 0 ? " (after \(informational) informational 1xx answers)" : ""
            return "the answer's head did not end within \(Self.shown(answer)) s after the request was sent\(interim)"
        }
        let allowed = answer + Double(expectedBody) / rate
        guard now - start > allowed else { return nil }
        return "the answer's body did not end within \(Self.shown(allowed)) s after the request was sent ("
            + "\(bodyBytes) of \(expectedBody) bytes came; at least \(Int(rate)) bytes/s are given time for)"
    }

    private static func shown(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds))" : "\((seconds * 10).rounded() / 10)"
    }
}
