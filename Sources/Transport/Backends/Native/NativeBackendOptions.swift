/// How the native backend talks to its receiver.
public struct NativeBackendOptions: Sendable, CustomStringConvertible {
    /// The bearer token sent as `Authorization: Bearer {token}` on every request, if the receiver has tokens.
    public var bearerToken: NativeBearerToken?
    /// Extra header fields on every request; never put into an error or a description.
    public var headers: HTTPHeaders
    /// The content coding chunks may travel in when the receiver accepts it and the compressibility probe says it
    /// pays; nil never compresses (the ULTRAFAST tier).
    public var compression: ContentCoding?
    /// The compression level (nil: the coding's default).
    public var compressionLevel: Int?
    /// The parity scheme announced at creation, if parity shards will be sent.
    public var parity: ParityScheme?
    /// Which HTTP version to ask for.
    public var version: HTTPVersionPreference
    /// Time limits of every request.
    public var timeouts: HTTPTimeouts

    /// Options; by default no token, no compression, no parity.
    public init(
        bearerToken: NativeBearerToken? = nil, headers: HTTPHeaders = HTTPHeaders(), compression: ContentCoding? = nil,
        compressionLevel: Int? = nil, parity: ParityScheme? = nil, version: HTTPVersionPreference = .automatic,
        timeouts: HTTPTimeouts = HTTPTimeouts()
    ) {
        self.bearerToken = bearerToken
        self.headers = headers
        self.compression = compression
        self.compressionLevel = compressionLevel
        self.parity = parity
        self.version = version
        self.timeouts = timeouts
    }

    /// Names what is set, never the token or the header values.
    public var description: String {
        "NativeBackendOptions(token: \(bearerToken == nil ? "none" : "<redacted>"), headers: \(headers.count), "
            + "compression: \(compression.map(\.rawValue) ?? "none"), parity: \(parity.map { "\($0.data)+\($0.parity)" } ?? "none"))"
    }
}
