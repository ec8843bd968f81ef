/// The offset-append recovery that IETF resumable upload and tus share (docs/PROTOCOL.md 4.4 and 5): a part is
/// appended at the server's offset until the server holds its end, and whatever interrupts an append is answered by
/// asking the server its offset and sending the rest from there. Each backend keeps its own wire (headers, digests,
/// what an answer must say) and asks this value what to send and what a 409 means:
/// - the bytes to send are the part's from the offset on: a slice of a body that can be read again, or the whole
///   body once when the offset is the part's start (a stream cannot be sent twice);
/// - a 409 after which the server's offset is the one just sent means the server still holds an earlier append (this
///   client's own, on a connection that stalled without closing): it is sent again after `HeldAppendWait`'s delays;
/// - a 409 after which the offset moved resumes from it (forward: the held append finished what it carried;
///   backward: the server lost bytes, at most `moveLimit` times);
/// - a server offset before the part's start is a conflict: the parts before it must be sent first.
struct OffsetAppendRecovery {
    let partStart: Int64
    let partEnd: Int64
    /// Where the next append starts: the server's offset as last known.
    private(set) var offset: Int64
    private var streamUsed: Bool
    private var moves = 0
    private let moveLimit: Int
    private var held: HeldAppendWait
    /// How messages name the server and its requests (`the server`, `append`, `appends`; `the tus server`,
    /// `PATCH`, `PATCHes`).
    private let server: String
    private let request: String
    private let requests: String

    /// A part of `partStart..<partEnd` appended from `offset`; `bodySent`: the body went out already (with the
    /// creation), so a stream cannot be sent again.
    init(
        partStart: Int64, partEnd: Int64, offset: Int64, bodySent: Bool, moveLimit: Int, heldWait: Duration,
        server: String, request: String, requests: String
    ) {
        self.partStart = partStart
        self.partEnd = partEnd
        self.offset = offset
        self.streamUsed = bodySent
        self.moveLimit = moveLimit
        self.held = HeldAppendWait(limit: heldWait)
        self.server = server
        self.request = request
        self.requests = requests
    }

    /// Whether the server holds the whole part.
    var isComplete: Bool { offset >= partEnd }

    /// The part's bytes from the offset on, to send now.
    mutating func remaining(of body: HTTPRequestBody) throws(TransportError) -> HTTPRequestBody {
        guard offset >= partStart else { throw fewer(offset) }
        let rest: HTTPRequestBody
        if let sliced = body.dropping(first: offset - partStart) {
            rest = sliced
        } else if offset == partStart, !streamUsed {
            rest = body
        } else {
            throw TransportError(
                .conflict, "\(server) holds \(offset) bytes and the part's body is a stream that cannot be sent again")
        }
        streamUsed = true
        return rest
    }

    /// Whether the part's body can be sent again from another offset (a failed append can then be continued).
    static func canResend(_ body: HTTPRequestBody) -> Bool { body.dropping(first: 0) != nil }

    /// The server holds the bytes through `end` (an append's answer, or the offset it reported after a failure).
    mutating func resume(at end: Int64) { offset = end }

    /// A 409, after which the server's offset is `now`: the delay before the same append is sent again while the
    /// server still holds an earlier one at this offset, or nil when the offset moved and the append goes on from it.
    mutating func conflicted(serverOffset now: Int64) throws(TransportError) -> Double? {
        guard now >= partStart else { throw fewer(now) }
        if now == offset {
            guard let delay = held.next() else {
                throw TransportError(
                    .conflict,
                    "\(server) refused \(held.refusals) \(requests) at its own offset \(offset) with 409 over "
                        + "\(Int(held.waited)) s: it still holds an earlier \(request) to this upload; run the same "
                        + "command again once the server has let it go")
            }
            return delay
        }
        if now < offset { moves += 1 }
        guard moves <= moveLimit else {
            throw TransportError(.conflict, "the server's offset kept going back (\(moves) answers 409, now \(now))")
        }
        offset = now
        return nil
    }

    private func fewer(_ held: Int64) -> TransportError {
        TransportError(
            .conflict,
            "\(server) holds \(held) bytes, fewer than where this part starts (\(partStart)): the parts before it "
                + "must be sent first")
    }
}
