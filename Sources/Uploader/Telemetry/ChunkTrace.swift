/// The transport protocol a chunk went over (upload-engine v2.2, section 6.2: TransportProtocol).
public enum TransportProtocol: String, Sendable, Codable, Hashable {
    /// HTTP/1.1 over TCP.
    case http1TCP = "h1"
    /// HTTP/2 over TCP.
    case http2TCP = "h2"
    /// HTTP/3 over QUIC.
    case http3QUIC = "h3"
    /// Not known (a backend that does not report it).
    case unknown
}

/// How one attempt to send a chunk ended.
public enum ChunkOutcome: String, Sendable, Codable, Hashable {
    /// The server acknowledged the chunk.
    case acknowledged
    /// The attempt failed and the chunk will be sent again.
    case retried
    /// The attempt failed and the upload gives up on it.
    case failed
    /// The upload was cancelled or paused during the attempt.
    case cancelled
}

/// One line of the per-chunk trace: what happened to one attempt, in numbers and names only. It carries no
/// file contents, no digests of them, no paths and no keys (the upload is named by the caller's opaque id).
/// Integers only, so the canonical JSON of a trace is the same on every platform.
public struct ChunkTrace: Sendable, Codable, Hashable {
    /// The caller's opaque upload id (not a path).
    public var uploadID: String
    /// The chunk's index.
    public var index: Int
    /// The chunk's offset in the file.
    public var offset: Int64
    /// The chunk's length.
    public var length: Int
    /// The attempt number (as in the idempotency key).
    public var attempt: Int
    /// When the attempt started, wall-clock milliseconds since the epoch.
    public var startedAtMs: Int64
    /// How long it took, in milliseconds.
    public var durationMs: Int64
    /// How it ended.
    public var outcome: ChunkOutcome
    /// The HTTP status, when there was a response.
    public var httpStatus: Int?
    /// The error code that caused a retry or failure, when there was one.
    public var errorCode: String?
    /// The protocol the request went over; nil (left out of the line) when the backend does not report it.
    public var transportProtocol: TransportProtocol?
    /// Whether the request reused an open connection; nil when the backend does not report it.
    public var connectionReused: Bool?
    /// Network path changes (interface or route changes, QUIC migrations) seen during the attempt; nil when no
    /// path observer was watching.
    public var pathChanges: Int?
    /// The round-trip time the transport measured, in microseconds, when it reports one.
    public var rttMicroseconds: Int64?
    /// Parts the request carried when it carried a run of several (its `length` is then the request's size); nil
    /// for a request of one part.
    public var requestParts: Int?
    /// The TCP congestion control the request's connection ran on, when the system says.
    public var congestionControl: String?

    /// A trace line.
    public init(
        uploadID: String, index: Int, offset: Int64, length: Int, attempt: Int, startedAtMs: Int64,
        durationMs: Int64, outcome: ChunkOutcome, httpStatus: Int? = nil, errorCode: String? = nil,
        transportProtocol: TransportProtocol?, connectionReused: Bool?, pathChanges: Int?,
        rttMicroseconds: Int64? = nil,
        requestParts: Int? = nil, congestionControl: String? = nil
    ) {
        self.requestParts = requestParts
        self.congestionControl = congestionControl
        self.uploadID = uploadID
        self.index = index
        self.offset = offset
        self.length = length
        self.attempt = attempt
        self.startedAtMs = startedAtMs
        self.durationMs = durationMs
        self.outcome = outcome
        self.httpStatus = httpStatus
        self.errorCode = errorCode
        self.transportProtocol = transportProtocol
        self.connectionReused = connectionReused
        self.pathChanges = pathChanges
        self.rttMicroseconds = rttMicroseconds
    }
}
