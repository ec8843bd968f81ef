/// One request as libmicrohttpd parsed it: the method, the request target's path exactly as received (no
/// percent-decoding, no query), every header line in order (duplicates kept), and the client's address.
public struct HTTPServerRequest: Sendable {
    /// The method as sent (`POST`, `PATCH` ...).
    public let method: String
    /// The path of the request target as received (percent-escapes untouched, query dropped).
    public let path: String
    /// The header lines, names as sent, in order.
    public let headers: [(name: String, value: String)]
    /// The client's address without the port (`127.0.0.1`, `::1`), or `unknown`.
    public let clientAddress: String
    /// Whether the client connected from a loopback address.
    public let isLoopback: Bool

    /// Creates a request (the daemon builds these; tests build them to drive the router directly).
    public init(
        method: String, path: String, headers: [(name: String, value: String)], clientAddress: String = "127.0.0.1",
        isLoopback: Bool = true
    ) {
        self.method = method
        self.path = path
        self.headers = headers
        self.clientAddress = clientAddress
        self.isLoopback = isLoopback
    }

    /// Every value of the header `name` (case-insensitive), in order.
    public func values(_ name: String) -> [String] {
        let lowered = name.lowercased()
        return headers.filter { $0.name.lowercased() == lowered }.map(\.value)
    }

    /// The header `name`'s lines joined with `, ` (RFC 9110 section 5.3), or nil when absent.
    public func header(_ name: String) -> String? {
        let all = values(name)
        return all.isEmpty ? nil : all.joined(separator: ", ")
    }

    /// Whether a body follows the header block (`Content-Length` above 0, or a `Transfer-Encoding`).
    public var hasBody: Bool {
        if has("Transfer-Encoding") { return true }
        return values("Content-Length").contains { Int64($0.trimmingCharacters()) ?? 1 > 0 }
    }

    /// Whether the header `name` is present.
    public func has(_ name: String) -> Bool { !values(name).isEmpty }
}

extension String {
    /// The text without leading and trailing spaces and tabs.
    fileprivate func trimmingCharacters() -> String {
        var text = self[...]
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
