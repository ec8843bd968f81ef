import Testing

@testable import AetherTransport

/// The offset-append recovery IETF and tus share, without a server: what is sent from which offset, and what a 409
/// means for the next append.
@Suite struct OffsetAppendRecoveryTests {
    static func recovery(
        offset: Int64 = 100, bodySent: Bool = false, moveLimit: Int = 2, heldWait: Duration = .seconds(3)
    ) -> OffsetAppendRecovery {
        OffsetAppendRecovery(
            partStart: 100, partEnd: 110, offset: offset, bodySent: bodySent, moveLimit: moveLimit,
            heldWait: heldWait, server: "the server", request: "append", requests: "appends")
    }

    static let body = HTTPRequestBody.bytes(Array(0..<10))

    /// A body that can be read again is sliced at the server's offset; the append is complete at the part's end.
    @Test func theRestIsSentFromTheServersOffsetUntilItHoldsThePartsEnd() throws {
        var append = Self.recovery()
        #expect(try append.remaining(of: Self.body).length == 10)
        append.resume(at: 104)
        #expect(!append.isComplete)
        let rest = try append.remaining(of: Self.body)
        #expect(rest.length == 6)
        #expect(rest.heldBytes == Array(4..<10))
        append.resume(at: 110)
        #expect(append.isComplete)
        #expect(OffsetAppendRecovery.canResend(Self.body))
    }

    /// A stream goes once, from the part's start, and never when the creation already carried it.
    @Test func aStreamIsSentOnceFromThePartsStartOnly() throws {
        let stream = HTTPRequestBody.stream(HTTPBodyStream(length: 10))
        #expect(!OffsetAppendRecovery.canResend(stream))
        var append = Self.recovery()
        _ = try append.remaining(of: stream)
        #expect(throws: TransportError.self) { try append.remaining(of: stream) }
        var sent = Self.recovery(bodySent: true)
        let error = try #require(throws: TransportError.self) { try sent.remaining(of: stream) }
        #expect(error.code == .conflict)
        #expect(error.message.contains("cannot be sent again"))
    }

    /// A 409 at the offset just sent: the server still holds an earlier append; the same append is sent again after
    /// 0, 0.5, 1, 2 s ... until the wait is used up, then a conflict that says what to do.
    @Test func aConflictAtTheSameOffsetWaitsForTheHeldAppendThenGivesUp() throws {
        var append = Self.recovery(heldWait: .seconds(3))
        #expect(try append.conflicted(serverOffset: 100) == 0)
        #expect(try append.conflicted(serverOffset: 100) == 0.5)
        #expect(try append.conflicted(serverOffset: 100) == 1)
        let error = try #require(throws: TransportError.self) { try append.conflicted(serverOffset: 100) }
        #expect(error.code == .conflict)
        #expect(error.message.contains("refused 4 appends at its own offset 100"))
        #expect(error.message.contains("run the same command again"))
    }

    /// A 409 after which the offset moved: forward is taken at once; backward (lost bytes) at most `moveLimit`
    /// times; before the part's start is a conflict naming the parts before it.
    @Test func aConflictThatMovedTheOffsetResumesFromItWithinLimits() throws {
        var append = Self.recovery(moveLimit: 1)
        #expect(try append.conflicted(serverOffset: 106) == nil)
        #expect(append.offset == 106)
        #expect(try append.conflicted(serverOffset: 102) == nil)
        #expect(append.offset == 102)
        let back = try #require(throws: TransportError.self) { try append.conflicted(serverOffset: 101) }
        #expect(back.message.contains("kept going back"))
        var before = Self.recovery()
        let early = try #require(throws: TransportError.self) { try before.conflicted(serverOffset: 90) }
        #expect(early.message.contains("fewer than where this part starts (100)"))
        var behind = Self.recovery(offset: 90)
        #expect(throws: TransportError.self) { try behind.remaining(of: Self.body) }
    }
}
