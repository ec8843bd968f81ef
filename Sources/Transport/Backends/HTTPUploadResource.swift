import AetherIO

/// What the native, IETF and tus backends share about upload resources over HTTP, written once: the creation URL
/// that `Location`s are resolved against (another origin is refused), one exchange that puts the protocol's own
/// fields over the caller's, the status-to-error rule (a protocol answers first for the statuses it gives a meaning
/// of its own), the expiry check and the part-layout rule. Each backend keeps only its protocol.
struct HTTPUploadResource: Sendable {
    /// How a request reaches the server (the HTTP client, or a script in tests).
    typealias Send = @Sendable (HTTPRequest) async throws(TransportError) -> HTTPResponse

    /// Who answers, as messages name it: "the receiver", "the server", "the tus server".
    let peer: String
    /// The creation URL, normalised.
    let creationURL: String
    /// Every request's fields: the caller's, with the protocol's own replacing any of the same name.
    let headers: HTTPHeaders
    let version: HTTPVersionPreference
    let timeouts: HTTPTimeouts
    /// The most bytes of an answer's body that are read.
    let responseBodyLimit: Int
    let send: Send
    private let base: ResourceURL
    private let origin: ResourceURL.Origin

    /// A resource created at `creationURL`; anything but an absolute `http(s)` URL is `.invalidArgument`.
    init(
        creationURL: String, peer: String, headers: HTTPHeaders, protocolFields: HTTPHeaders,
        version: HTTPVersionPreference, timeouts: HTTPTimeouts, responseBodyLimit: Int, send: @escaping Send
    ) throws(TransportError) {
        do { base = try ResourceURL(absolute: creationURL) } catch {
            throw TransportError(.invalidArgument, "the creation URL is not an absolute http(s) URL")
        }
        origin = try base.origin
        self.creationURL = base.text
        self.peer = peer
        var all = headers
        for field in protocolFields { all.replace(field.name, field.value) }
        self.headers = all
        self.version = version
        self.timeouts = timeouts
        self.responseBodyLimit = responseBodyLimit
        self.send = send
    }

    /// `reference` (a `Location`) resolved against the creation URL; another origin than its own is refused.
    func resolve(_ reference: String) throws(TransportError) -> String {
        let url = try base.resolving(reference)
        guard try url.origin == origin else {
            throw TransportError(.protocolViolation, "\(peer)'s Location points to another origin")
        }
        return url.text
    }

    /// Sends `method` to `url` with every request's fields, then `extra` (replacing those of the same name), and
    /// `timeouts` when given instead of the resource's.
    func exchange(
        _ method: String, _ url: String, _ extra: HTTPHeaders = HTTPHeaders(), body: HTTPRequestBody = .empty,
        timeouts: HTTPTimeouts? = nil
    ) async throws(TransportError) -> HTTPResponse {
        var all = headers
        for field in extra { all.replace(field.name, field.value) }
        return try await send(
            HTTPRequest(
                method: method, url: url, headers: all, body: body, version: version,
                timeouts: timeouts ?? self.timeouts, responseBodyLimit: responseBodyLimit))
    }

    /// The error for an answer the exchange did not expect, `note` added to the status in the message (a problem
    /// document's name, the server's limits). The status decides the code; a protocol maps the statuses it gives a
    /// meaning of its own before asking this.
    func error(for response: HTTPResponse, _ what: String, note: String = "") -> TransportError {
        Self.error(for: response, what, peer: peer, note: note)
    }

    /// `error(for:_:note:)` before a resource exists (a discovery's `OPTIONS`), `peer` answering.
    static func error(for response: HTTPResponse, _ what: String, peer: String, note: String = "") -> TransportError {
        let status = response.status
        switch status {
        case 401, 403: return TransportError(.accessDenied, "\(peer) refused the \(what) (\(status)\(note))")
        case 404, 410:
            return TransportError(
                .gone, "the upload is gone (\(status) to the \(what)\(note): expired, terminated or unknown)")
        case 409: return TransportError(.conflict, "the \(what) was for another offset than \(peer)'s (409\(note))")
        case 413: return TransportError(.tooLarge, "\(peer) refused the \(what) as too large (413\(note))")
        case 400..<500: return TransportError(.remoteRejected, "\(peer) refused the \(what) (\(status)\(note))")
        case 507:
            // Not transient: sending the bytes again fills nothing. The state is kept, so the same command resumes
            // once there is room.
            return TransportError(
                .remoteRejected,
                "\(peer) has no room to store the \(what) (507 Insufficient Storage\(note)); free space on \(peer), "
                    + "then run the same command again")
        case 500..<600: return TransportError(.serverFailed, "\(peer) failed the \(what) (\(status)\(note))")
        default: return TransportError(.protocolViolation, "unexpected status \(status) to the \(what)")
        }
    }

    /// Whether `upload`'s lifetime, as the server announced it, has ended by `clock`.
    static func isExpired(_ upload: RemoteUpload, clock: any AetherClock) -> Bool {
        guard let expires = upload.expires else { return false }
        return clock.wallWholeSeconds() >= expires
    }

    /// The one part-layout rule: part `index` starts at `index * partSize`, holds the rest of the object up to a
    /// part's size, and its body (when its length is known in advance) holds exactly that; `partCount`, where the
    /// protocol numbers parts, bounds the index.
    static func checkLayout(_ part: UploadPart, size: Int64, partSize: Int64, partCount: Int? = nil)
        throws(TransportError)
    {
        let start = Int64(part.index) * partSize
        guard partSize > 0, part.index >= 0, partCount.map({ part.index < $0 }) ?? true, part.offset == start,
            part.length == max(0, min(partSize, size - start)),
            part.body.length == nil || part.body.length == part.length
        else {
            throw TransportError(.invalidArgument, "part \(part.index) does not match the upload's layout or its body")
        }
    }
}
