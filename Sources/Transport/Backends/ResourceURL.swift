/// An absolute `http(s)` URL split as RFC 3986 section 3 does, for resolving a `Location` the server sent
/// (section 5.2) and comparing origins (RFC 6454: scheme, host, port). Fragments are dropped.
struct ResourceURL: Sendable, Hashable {
    /// `http` or `https`, lower case.
    let scheme: String
    /// `host[:port]` as written (user information removed).
    let authority: String
    /// The path, `/` when empty.
    let path: String
    /// The query without `?`, if any.
    let query: String?

    /// Parses an absolute URL; anything but `http(s)://authority...` throws `.protocolViolation`.
    init(absolute text: String) throws(TransportError) {
        try Self.checkCharacters(text)
        guard let colon = text.firstIndex(of: ":") else { throw Self.malformed("has no scheme") }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { throw Self.malformed("is not http or https") }
        let rest = text[text.index(after: colon)...]
        guard rest.hasPrefix("//") else { throw Self.malformed("has no authority") }
        let afterSlashes = rest.dropFirst(2)
        let authorityEnd = afterSlashes.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterSlashes.endIndex
        var authority = String(afterSlashes[..<authorityEnd])
        if let at = authority.lastIndex(of: "@") { authority = String(authority[authority.index(after: at)...]) }
        guard !authority.isEmpty else { throw Self.malformed("has an empty host") }
        let (path, query) = Self.splitPathAndQuery(afterSlashes[authorityEnd...])
        self.init(scheme: scheme, authority: authority, path: path.isEmpty ? "/" : path, query: query)
        _ = try origin
    }

    private init(scheme: String, authority: String, path: String, query: String?) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
    }

    /// The URL as text.
    var text: String { "\(scheme)://\(authority)\(path)" + (query.map { "?\($0)" } ?? "") }

    /// Scheme, lower-cased host and effective port.
    var origin: Origin {
        get throws(TransportError) {
            var host = Substring(authority)
            var port: Substring?
            if host.hasPrefix("[") {
                guard let close = host.firstIndex(of: "]") else { throw Self.malformed("has an unclosed IPv6 host") }
                let after = host[host.index(after: close)...]
                if after.hasPrefix(":") {
                    port = after.dropFirst()
                } else if !after.isEmpty {
                    throw Self.malformed("has text after its IPv6 host")
                }
                host = host[...close]
            } else if let colon = host.lastIndex(of: ":") {
                port = host[host.index(after: colon)...]
                host = host[..<colon]
            }
            guard !host.isEmpty else { throw Self.malformed("has an empty host") }
            var number = scheme == "https" ? 443 : 80
            if let port, !port.isEmpty {
                guard port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(port),
                    value <= 65535
                else { throw Self.malformed("has an invalid port") }
                number = value
            }
            return Origin(scheme: scheme, host: host.lowercased(), port: number)
        }
    }

    /// An origin (RFC 6454).
    struct Origin: Hashable, Sendable {
        let scheme: String
        let host: String
        let port: Int
    }

    /// Resolves `reference` (absolute, network-path, absolute-path, relative-path or query-only) against this
    /// URL as RFC 3986 section 5.2.2 does.
    func resolving(_ reference: String) throws(TransportError) -> ResourceURL {
        try Self.checkCharacters(reference)
        let withoutFragment = Substring(reference.prefix { $0 != "#" })
        if Self.hasScheme(withoutFragment) { return try ResourceURL(absolute: String(withoutFragment)) }
        if withoutFragment.hasPrefix("//") { return try ResourceURL(absolute: scheme + ":" + withoutFragment) }
        let (refPath, refQuery) = Self.splitPathAndQuery(withoutFragment)
        if refPath.isEmpty {
            return ResourceURL(scheme: scheme, authority: authority, path: path, query: refQuery ?? query)
        }
        let merged: String
        if refPath.hasPrefix("/") {
            merged = refPath
        } else {
            let base = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "/"
            merged = base + refPath
        }
        return ResourceURL(scheme: scheme, authority: authority, path: Self.removeDotSegments(merged), query: refQuery)
    }

    /// RFC 3986 section 5.2.4, on whole segments.
    static func removeDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (position, segment) in segments.enumerated() {
            let last = position == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if last { output.append("") }
            default: output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }

    private static func hasScheme(_ text: Substring) -> Bool {
        guard let colon = text.firstIndex(of: ":"), let first = text.first, first.isASCII, first.isLetter else {
            return false
        }
        let name = text[..<colon]
        if let slash = text.firstIndex(where: { $0 == "/" || $0 == "?" }), slash < colon { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    private static func splitPathAndQuery(_ text: Substring) -> (String, String?) {
        let trimmed = text.prefix { $0 != "#" }
        guard let mark = trimmed.firstIndex(of: "?") else { return (String(trimmed), nil) }
        return (String(trimmed[..<mark]), String(trimmed[trimmed.index(after: mark)...]))
    }

    private static func checkCharacters(_ text: String) throws(TransportError) {
        guard !text.isEmpty, text.utf8.count <= 8192, !text.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) else {
            throw malformed("is empty, too long, or has a space, control or non-ASCII character")
        }
    }

    private static func malformed(_ why: String) -> TransportError {
        TransportError(.protocolViolation, "an upload URL \(why)")
    }
}
