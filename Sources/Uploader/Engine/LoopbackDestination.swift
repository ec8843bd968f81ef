import AetherScheduling

/// Whether an `http(s)://` destination is on this machine (a loopback host: `localhost`, `127.0.0.0/8`, `::1`).
/// There the link usually runs at memory speed, so before any measurement exists the uploader starts with the
/// ULTRAFAST tier's request size and parallelism instead of one small request at a time. It is a first guess only:
/// the layout's parts stay small when the backend takes runs (a relay on loopback may front a slow, interrupted
/// link), and the requests follow the measurements from the first acknowledgement.
enum LoopbackDestination {
    /// True for `http://` or `https://` URLs whose host is loopback; false for anything else (`s3://`, unparsable).
    static func contains(_ destination: String) -> Bool {
        guard let host = host(of: destination) else { return false }
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { octet in
            !octet.isEmpty && octet.count <= 3 && octet.allSatisfy(\.isASCIIDigit)
                && Int(octet).map { $0 <= 255 } == true
        }
    }

    /// The lowercased host of an `http(s)://` URL (an IPv6 literal without its brackets), or nil.
    static func host(of destination: String) -> String? {
        let lowered = destination.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lowered.hasPrefix($0) }) else { return nil }
        var authority = Substring(lowered.dropFirst(scheme.count).prefix { !"/?#".contains($0) })
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let host = authority[authority.index(after: authority.startIndex)..<close]
            return host.isEmpty ? nil : String(host)
        }
        let host = authority.prefix { $0 != ":" }
        return host.isEmpty ? nil : String(host)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension NetworkSpeedTier {
    /// The tier assumed before any measurement: ULTRAFAST on loopback, NORMAL elsewhere.
    init(loopback: Bool) { self = loopback ? .ultrafast : .normal }
}
