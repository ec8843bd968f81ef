/// Body of control record `0x43`: the sender's own counts, answering a counts query (44 bytes).
public struct CountsAnswer: Sendable, Hashable {
    /// The query this answers.
    public var queryID: UInt32
    /// Records the sender sealed in this session.
    public var recordsSealed: UInt64
    /// Records the sender opened in this session.
    public var recordsOpened: UInt64
    /// Records that failed authentication.
    public var authenticationFailures: UInt64
    /// Records rejected by the replay window.
    public var replaysRejected: UInt64
    /// Authenticated records with an unknown or unparseable control type.
    public var unknownControl: UInt64

    /// A counts answer.
    public init(
        queryID: UInt32, recordsSealed: UInt64, recordsOpened: UInt64, authenticationFailures: UInt64,
        replaysRejected: UInt64, unknownControl: UInt64
    ) {
        self.queryID = queryID
        self.recordsSealed = recordsSealed
        self.recordsOpened = recordsOpened
        self.authenticationFailures = authenticationFailures
        self.replaysRejected = replaysRejected
        self.unknownControl = unknownControl
    }

    /// Parses exactly 44 bytes.
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> CountsAnswer {
        var reader = WireReader(bytes, structure: "counts answer")
        let answer = CountsAnswer(
            queryID: try reader.u32("query id"), recordsSealed: try reader.u64("sealed"),
            recordsOpened: try reader.u64("opened"), authenticationFailures: try reader.u64("auth failures"),
            replaysRejected: try reader.u64("replays"), unknownControl: try reader.u64("unknown control"))
        try reader.finish()
        return answer
    }

    /// The 44-byte encoding.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(44)
        out.appendBigEndian(queryID)
        for value in [recordsSealed, recordsOpened, authenticationFailures, replaysRejected, unknownControl] {
            out.appendBigEndian(value)
        }
        return out
    }
}
