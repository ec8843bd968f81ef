public import AetherIO

/// How a `TusBackend` talks to its server.
public struct TusBackendOptions: Sendable {
    /// Headers added to every request (for example `Authorization`); never logged or put in an error.
    public var headers: HTTPHeaders
    /// The largest PATCH body (one part). Capped by `Tus-Max-Size`.
    public var maximumPartSize: Int64
    /// Whether to upload parts as partial uploads in parallel when the server offers concatenation.
    public var useConcatenation: Bool
    /// The most partial uploads one upload is split into: their URLs all travel in one `Upload-Concat` header,
    /// which must fit the server's header limit (100 absolute URLs are about 8 KiB).
    public var maximumConcatenatedParts: Int
    /// Checksum algorithms in order of preference; the first the server lists is sent with every PATCH of a body
    /// held in memory. Empty: none.
    public var checksumAlgorithms: [TusChecksumAlgorithm]
    /// The HTTP version to ask for.
    public var version: HTTPVersionPreference
    /// Time limits of each request.
    public var timeouts: HTTPTimeouts
    /// The clock whose wall reading is compared with `Upload-Expires`.
    public var clock: any AetherClock
    /// How long appends refused with 409 at the server's own offset are sent again, with back-off, while the server
    /// still holds an earlier append (this client's own, on a connection that stalled without closing) before the
    /// upload fails with `.conflict` saying so.
    public var heldAppendWait: Duration = .seconds(120)

    /// Options; by default 64 MiB parts, concatenation when offered (at most 100 parts), SHA-1 then CRC-32.
    public init(
        headers: HTTPHeaders = HTTPHeaders(), maximumPartSize: Int64 = 64 << 20, useConcatenation: Bool = true,
        maximumConcatenatedParts: Int = 100, checksumAlgorithms: [TusChecksumAlgorithm] = [.sha1, .crc32],
        version: HTTPVersionPreference = .automatic, timeouts: HTTPTimeouts = HTTPTimeouts(),
        clock: any AetherClock = SystemClock()
    ) {
        self.headers = headers
        self.maximumPartSize = maximumPartSize
        self.useConcatenation = useConcatenation
        self.maximumConcatenatedParts = maximumConcatenatedParts
        self.checksumAlgorithms = checksumAlgorithms
        self.version = version
        self.timeouts = timeouts
        self.clock = clock
    }
}
