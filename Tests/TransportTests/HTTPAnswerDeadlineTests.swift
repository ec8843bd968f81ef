import Testing

@testable import AetherTransport

/// The answer's deadlines as plain arithmetic on monotonic seconds.
@Suite struct HTTPAnswerDeadlineTests {
    static let timeouts = HTTPTimeouts(firstByte: .seconds(30), answer: .seconds(60), minimumAnswerBytesPerSecond: 1000)

    @Test func nothingIsOverdueWhileTheRequestIsStillLeaving() {
        var deadline = HTTPAnswerDeadline(Self.timeouts, bodyLimit: 1 << 20)
        #expect(deadline.overdue(at: 1_000, informational: 0, bodyBytes: 0) == nil)
        // Handed over at t=10 but bytes stay queued until t=500: the wait counts from the last turn that saw them.
        for t in stride(from: 10.0, through: 500, by: 1) { deadline.sending(at: t, queued: true) }
        deadline.sending(at: 501, queued: false)
        deadline.sending(at: 520, queued: false)
        #expect(deadline.sentAt == 500)
        #expect(deadline.overdue(at: 530, informational: 0, bodyBytes: 0) == nil)
        let late = deadline.overdue(at: 531.5, informational: 0, bodyBytes: 0)
        #expect(late?.contains("no answer within 30 s") == true)
    }

    @Test func aHeadThatDoesNotEndIsOverdueAtTheAnswerDeadlineWhateverTrickles() {
        var deadline = HTTPAnswerDeadline(Self.timeouts, bodyLimit: 1 << 20)
        deadline.sending(at: 0, queued: false)
        deadline.answerStarted(at: 1)
        #expect(deadline.overdue(at: 60, informational: 3, bodyBytes: 0) == nil)
        let late = deadline.overdue(at: 60.5, informational: 3, bodyBytes: 0)
        #expect(late?.contains("head did not end within 60 s") == true)
        #expect(late?.contains("3 informational") == true)
    }

    @Test func theBodyIsGivenTimeForItsDeclaredLengthAtTheMinimumRate() {
        var deadline = HTTPAnswerDeadline(Self.timeouts, bodyLimit: 1 << 20)
        deadline.sending(at: 0, queued: false)
        deadline.answerStarted(at: 0.1)
        deadline.headEnded(contentLength: 20_000)  // 20 s at 1000 bytes/s
        #expect(deadline.overdue(at: 80, informational: 0, bodyBytes: 5) == nil)
        let late = deadline.overdue(at: 80.5, informational: 0, bodyBytes: 5)
        #expect(late?.contains("body did not end within 80 s") == true)
        #expect(late?.contains("5 of 20000 bytes") == true)
        // Without a declared length the response body limit is given time for; a length over it, only the limit.
        var chunked = HTTPAnswerDeadline(Self.timeouts, bodyLimit: 10_000)
        chunked.sending(at: 0, queued: false)
        chunked.answerStarted(at: 1)
        chunked.headEnded(contentLength: nil)
        #expect(chunked.overdue(at: 70, informational: 0, bodyBytes: 0) == nil)
        #expect(chunked.overdue(at: 70.5, informational: 0, bodyBytes: 0) != nil)
        var huge = HTTPAnswerDeadline(Self.timeouts, bodyLimit: 10_000)
        huge.sending(at: 0, queued: false)
        huge.answerStarted(at: 1)
        huge.headEnded(contentLength: 1 << 40)
        #expect(huge.overdue(at: 70.5, informational: 0, bodyBytes: 0) != nil)
    }

    @Test func anEarlyAnswerCountsFromItsFirstByteAndNoLimitsMeansNoDeadline() {
        var early = HTTPAnswerDeadline(Self.timeouts, bodyLimit: 100)
        early.answerStarted(at: 5)
        #expect(early.overdue(at: 65, informational: 0, bodyBytes: 0) == nil)
        #expect(early.overdue(at: 65.5, informational: 0, bodyBytes: 0) != nil)
        var unlimited = HTTPAnswerDeadline(HTTPTimeouts(firstByte: nil, answer: nil), bodyLimit: 100)
        unlimited.sending(at: 0, queued: false)
        #expect(unlimited.overdue(at: 1e9, informational: 0, bodyBytes: 0) == nil)
    }

    @Test func allowingSilenceLengthensTheWaitsNeverShortensThem() {
        let base = HTTPTimeouts()
        let longer = base.allowingSilence(.seconds(300))
        #expect(longer.idle == .seconds(300))
        #expect(longer.firstByte == .seconds(300))
        #expect(longer.answer == .seconds(360))
        let already = HTTPTimeouts(idle: .seconds(900), firstByte: .seconds(900)).allowingSilence(.seconds(300))
        #expect(already.idle == .seconds(900))
        #expect(already.firstByte == .seconds(900))
        #expect(HTTPTimeouts(idle: nil, firstByte: nil, answer: nil).allowingSilence(.seconds(5)).answer == nil)
    }
}
