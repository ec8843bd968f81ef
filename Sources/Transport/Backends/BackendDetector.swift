/// Turns a destination as a user writes it into an `UploadBackend` (issue 12, docs/PROTOCOL.md section 1).
///
/// - `s3://bucket/key`: the S3 multipart backend (`S3Backend.init(url:endpoint:flavor:chain:client:options:)`),
///   with the endpoint URL, flavor and credentials of `Options`. Nothing is sent.
/// - `http://...` or `https://...`: one `OPTIONS` request to the URL (`optionsRequest`), whose answer
///   (`ProtocolOffer`) names the protocols the server speaks; the first of native, IETF and tus that is offered
///   and that this build speaks is chosen, or the one the caller forces (an error when it is not offered).
///
/// Native is built from the answer's `Aether-Capabilities` (`NativeBackend`). When that field is unusable
/// (malformed, or another protocol version) the next offered protocol is chosen and `fallbackReason` says why; a
/// server offering only an unusable native is `.protocolUnsupported`. Any other scheme, a URL with user
/// information, or a malformed URL is `.invalidArgument` before anything is sent.
public struct BackendDetector: Sendable {
    /// Where an upload goes, parsed and checked.
    package enum Destination: Sendable, Hashable {
        /// An S3 object.
        case s3(S3Destination)
        /// An HTTP(S) URL (fragment dropped, scheme lower-cased).
        case http(String)
    }

    /// What the detector sends and what the backends it builds are given.
    public struct Options: Sendable {
        /// Header fields sent on the `OPTIONS` request and on every request of the IETF or tus backend built
        /// (e.g. `Authorization`); never put into an error.
        public var headers: HTTPHeaders
        /// The IETF version asked for in the `OPTIONS` request and spoken when the answer names no version.
        public var ietfVersion: IETFInteropVersion
        /// The IETF backend's options (`headers` are added to them).
        public var ietf: IETFBackendOptions
        /// The tus backend's options (`headers` are added to them).
        public var tus: TusBackendOptions
        /// The S3 endpoint URL (MinIO, Ceph, R2, a test server); nil for AWS.
        public var s3Endpoint: String?
        /// The S3 implementation behind the endpoint; nil: the endpoint's (`S3Flavor.detect`).
        public var s3Flavor: S3Flavor?
        /// Where S3 credentials and the region come from.
        public var s3Credentials: S3CredentialChain
        /// The S3 backend's options.
        public var s3: S3Backend.Options
        /// The native backend's options (`headers` are added to them; a bearer token goes here).
        public var native: NativeBackendOptions
        /// The HTTP version of the `OPTIONS` request.
        public var version: HTTPVersionPreference
        /// The time limits of the `OPTIONS` request.
        public var timeouts: HTTPTimeouts

        /// Options; by default no extra header, IETF interop version 8, each backend's defaults, AWS S3 (the
        /// flavor of the endpoint when one is given) with credentials from the environment and the shared files.
        public init(
            headers: HTTPHeaders = HTTPHeaders(), ietfVersion: IETFInteropVersion = .latest,
            ietf: IETFBackendOptions = IETFBackendOptions(), tus: TusBackendOptions = TusBackendOptions(),
            s3Endpoint: String? = nil, s3Flavor: S3Flavor? = nil,
            s3Credentials: S3CredentialChain = S3CredentialChain(),
            s3: S3Backend.Options = S3Backend.Options(), version: HTTPVersionPreference = .automatic,
            timeouts: HTTPTimeouts = HTTPTimeouts(), native: NativeBackendOptions = NativeBackendOptions()
        ) {
            self.native = native
            self.headers = headers
            self.ietfVersion = ietfVersion
            self.ietf = ietf
            self.tus = tus
            self.s3Endpoint = s3Endpoint
            self.s3Flavor = s3Flavor
            self.s3Credentials = s3Credentials
            self.s3 = s3
            self.version = version
            self.timeouts = timeouts
        }
    }

    /// The protocols this build has a backend for on an HTTP server.
    public static let spokenOverHTTP: Set<TransportMode> = [.native, .ietfResumable, .tus]

    /// What the detector sends and builds with.
    public let options: Options
    private let client: HTTPClient

    /// A detector sending through `client`.
    public init(client: HTTPClient, options: Options = Options()) {
        self.client = client
        self.options = options
    }

    /// Finds the protocol for `destination` and builds its backend; `forcing` a protocol (`--protocol`) skips the
    /// preference order and fails when the server does not offer it.
    public func detect(_ destination: String, forcing forced: TransportMode? = nil) async throws(TransportError)
        -> DetectedBackend
    {
        switch try Self.parse(destination) {
        case .s3(let object):
            if let forced, forced != .s3Multipart {
                throw TransportError(.invalidArgument, "an s3:// destination is reached with s3, not \(forced)")
            }
            let backend = try S3Backend(
                url: object.description, endpoint: options.s3Endpoint, flavor: options.s3Flavor,
                chain: options.s3Credentials, client: client, options: options.s3)
            return DetectedBackend(
                mode: .s3Multipart, backend: backend, offer: nil, fallbackReason: nil, origin: backend.objectURL)
        case .http(let url):
            if forced == .s3Multipart {
                throw TransportError(.invalidArgument, "s3 needs an s3://bucket/key destination, not an http(s) URL")
            }
            let response = try await client.send(Self.optionsRequest(for: url, options: options))
            let offer = ProtocolOffer(status: response.status, headers: response.headers)
            try Self.checkAnswered(offer, url: url)
            let (mode, reason) = try Self.choose(
                offered: offer.modes, forcing: forced, spoken: Self.spokenOverHTTP, url: url)
            do {
                return DetectedBackend(
                    mode: mode, backend: try build(mode, url: url, offer: offer), offer: offer, fallbackReason: reason,
                    origin: url)
            } catch {
                guard mode == .native, error.code == .protocolViolation || error.code == .versionUnsupported else {
                    throw error
                }
                // An unusable Aether-Capabilities: the next offered protocol (every Aether receiver speaks IETF).
                let why = "\(Self.name(url)) offers native, but \(error.message)"
                guard forced == nil,
                    let next = TransportMode.httpPreference.first(where: {
                        $0 != .native && offer.modes.contains($0) && Self.spokenOverHTTP.contains($0)
                    })
                else { throw TransportError(.protocolUnsupported, why) }
                return DetectedBackend(
                    mode: next, backend: try build(next, url: url, offer: offer), offer: offer,
                    fallbackReason: why + "; using \(next)", origin: url)
            }
        }
    }

    /// The one request sent for an HTTP destination: `OPTIONS {url}` with `Upload-Draft-Interop-Version` (the
    /// IETF version asked for) and the caller's header fields; no body, no `Tus-Resumable` (tus 1.0 "OPTIONS").
    package static func optionsRequest(for url: String, options: Options) -> HTTPRequest {
        var headers = options.headers
        headers.replace("Upload-Draft-Interop-Version", String(options.ietfVersion.rawValue))
        return HTTPRequest(
            method: "OPTIONS", url: url, headers: headers, version: options.version, timeouts: options.timeouts,
            responseBodyLimit: 64 << 10)
    }

    /// Parses and checks a destination: `s3://bucket/key` or an absolute `http(s)` URL without user information.
    /// Everything else is `.invalidArgument`; the error never repeats the text (it may hold a secret).
    package static func parse(_ destination: String) throws(TransportError) -> Destination {
        guard let colon = destination.firstIndex(of: ":"), destination[colon...].hasPrefix("://") else {
            throw TransportError(.invalidArgument, "a destination is s3://bucket/key or an http(s):// URL")
        }
        let scheme = destination[..<colon]
        guard !scheme.isEmpty,
            scheme.utf8.allSatisfy({ ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) })
        else {
            throw TransportError(.invalidArgument, "a destination is s3://bucket/key or an http(s):// URL")
        }
        let rest = destination[colon...].dropFirst(3)
        switch scheme.lowercased() {
        case "s3":
            return .s3(try S3Destination(parsing: "s3://" + rest))
        case "http", "https":
            let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            guard !authority.contains("@") else {
                throw TransportError(
                    .invalidArgument,
                    "a destination URL must not carry user information (user:password@); send credentials as a header")
            }
            do {
                return .http(try ResourceURL(absolute: destination).text)
            } catch {
                throw TransportError(
                    .invalidArgument,
                    "the destination URL is malformed (an empty host, a bad port, a space, a control or non-ASCII "
                        + "character, or over 8 KiB)")
            }
        default:
            throw TransportError(
                .invalidArgument,
                "unsupported destination scheme \(String(scheme.prefix(16))); use s3://, http:// or https://")
        }
    }

    /// The protocol to use among `offered`: `forced` if given (it must be offered and spoken), else the first of
    /// native, IETF and tus that is offered and `spoken`. The reason names a more preferred protocol offered but
    /// not spoken. Nothing usable: `.protocolUnsupported` naming `url`.
    package static func choose(
        offered: Set<TransportMode>, forcing forced: TransportMode?, spoken: Set<TransportMode>, url: String
    ) throws(TransportError) -> (mode: TransportMode, fallbackReason: String?) {
        let place = name(url)
        let list = TransportMode.httpPreference.filter(offered.contains).map(\.description)
        let offers = list.isEmpty ? "offers no upload protocol" : "offers \(list.joined(separator: ", "))"
        if let forced {
            guard offered.contains(forced) else {
                throw TransportError(.protocolUnsupported, "\(place) does not offer \(forced); it \(offers)")
            }
            guard spoken.contains(forced) else {
                throw TransportError(
                    .protocolUnsupported, "\(place) offers \(forced), which this build does not speak yet")
            }
            return (forced, nil)
        }
        var passed: [TransportMode] = []
        for mode in TransportMode.httpPreference where offered.contains(mode) {
            guard spoken.contains(mode) else {
                passed.append(mode)
                continue
            }
            let reason =
                passed.isEmpty
                ? nil
                : "\(place) offers \(passed.map(\.description).joined(separator: ", ")), which this build does not "
                    + "speak yet; using \(mode)"
            return (mode, reason)
        }
        if passed.isEmpty {
            throw TransportError(
                .protocolUnsupported,
                "\(place) \(offers): its OPTIONS answer has no Aether-Capabilities, Upload-Limit, "
                    + "Upload-Draft-Interop-Version, Tus-Resumable or Tus-Version field")
        }
        throw TransportError(
            .protocolUnsupported,
            "\(place) \(offers) only, which this build does not speak")
    }

    /// Refuses an answer that is not a 2xx and not a 405 or 501 (which are read for IETF and tus).
    static func checkAnswered(_ offer: ProtocolOffer, url: String) throws(TransportError) {
        let status = offer.status
        let place = name(url)
        switch status {
        case 200..<300: return
        case 405, 501:
            guard !offer.modes.isEmpty else {
                throw TransportError(
                    .protocolUnsupported,
                    "\(place) does not answer OPTIONS (\(status)) and its answer names no upload protocol")
            }
        case 401, 403: throw TransportError(.accessDenied, "\(place) refused the OPTIONS request (\(status))")
        case 404, 410: throw TransportError(.gone, "\(place) does not exist (\(status) to OPTIONS)" + rootHint(url))
        case 300..<400:
            throw TransportError(
                .remoteRejected, "\(place) redirects OPTIONS (\(status)); give the URL it redirects to")
        case 400..<500:
            throw TransportError(.remoteRejected, "\(place) refused the OPTIONS request (\(status))" + rootHint(url))
        case 500..<600: throw TransportError(.serverFailed, "\(place) failed the OPTIONS request (\(status))")
        default: throw TransportError(.protocolViolation, "\(place) answered OPTIONS with status \(status)")
        }
    }

    /// For a URL without a path (`http://host:port` or `.../`): where an `aether serve` receiver takes uploads.
    static func rootHint(_ url: String) -> String {
        let withoutQuery = url.prefix { $0 != "?" && $0 != "#" }
        let parts = withoutQuery.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        // "http:", "", "host:port", then the path without its first slash, if any.
        guard parts.count >= 3, parts[0].hasSuffix(":"), parts[1].isEmpty else { return "" }
        guard parts.count == 3 || parts[3].isEmpty else { return "" }
        let base = withoutQuery.hasSuffix("/") ? String(withoutQuery.dropLast()) : String(withoutQuery)
        return "; an aether serve receiver takes uploads at \(base)/uploads"
    }

    /// The URL for a message: scheme, authority and path (the query may hold a token), at most 200 characters.
    static func name(_ url: String) -> String {
        let withoutQuery = url.prefix { $0 != "?" && $0 != "#" }
        return String(withoutQuery.prefix(200))
    }

    /// The backend for `mode` at `url`, from what `offer` says (IETF version and limits, tus extensions).
    func build(_ mode: TransportMode, url: String, offer: ProtocolOffer) throws(TransportError)
        -> any UploadBackend
    {
        switch mode {
        case .ietfResumable:
            var version = options.ietfVersion
            if let answered = offer.ietfInteropVersion {
                guard let spoken = IETFInteropVersion(rawValue: Int(truncatingIfNeeded: answered)),
                    Int64(spoken.rawValue) == answered
                else {
                    throw TransportError(
                        .versionUnsupported,
                        "\(Self.name(url)) speaks IETF interop version \(answered), not 6 or 8")
                }
                version = spoken
            }
            var ietf = options.ietf
            for field in options.headers { ietf.headers.replace(field.name, field.value) }
            let limitFields = offer.headers.values("Upload-Limit")
            let limits =
                limitFields.isEmpty
                ? nil : IETFUploadLimits(field: limitFields.joined(separator: ", "), version: version)
            return try IETFResumableBackend(
                creationURL: url, client: client, version: version, limits: limits, options: ietf)
        case .tus:
            var tus = options.tus
            for field in options.headers { tus.headers.replace(field.name, field.value) }
            return try TusBackend(
                creationURL: url, client: client, server: TusServerInfo(headers: offer.headers), options: tus)
        case .native:
            var native = options.native
            for field in options.headers { native.headers.replace(field.name, field.value) }
            return try NativeBackend(
                creationURL: url, server: try NativeBackend.capabilities(in: offer.headers), client: client,
                options: native)
        case .s3Multipart:
            // `choose` only returns a mode in `spokenOverHTTP`.
            throw TransportError(.protocolUnsupported, "\(Self.name(url)): \(mode) has no HTTP backend in this build")
        }
    }
}
