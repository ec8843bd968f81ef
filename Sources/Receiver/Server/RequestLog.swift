import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One line per request on standard error: human text or one JSON object a line. Lines carry the method, the
/// route (the path with the upload id, never a token or a query), status, bytes, milliseconds and upload id.
public final class RequestLog: Sendable {
    /// The line format.
    public enum Format: String, Sendable, CaseIterable {
        /// `2026-11-30T16:00:00Z PATCH /uploads/{id} 204 1048576B 12ms id=...`
        case text
        /// `{"bytes":1048576,"method":"PATCH",...}`
        case json
    }

    /// One request's line.
    public struct Entry: Sendable {
        /// The method as received, cut to 32 characters (control characters are replaced in the line).
        public var method: String
        /// The route: the request path as received, cut to 256 bytes.
        public var route: String
        /// The status answered, nil when the request was cut short.
        public var status: Int?
        /// Body bytes received.
        public var bytes: Int64
        /// Milliseconds from headers to the end.
        public var milliseconds: Double
        /// The upload the request was about, when there is one.
        public var uploadID: String?
        /// The client name (token name or `loopback`), never the token.
        public var client: String?
    }

    private let format: Format
    private let sink: @Sendable (String) -> Void
    private let lock = Mutex(())

    /// A log writing `format` lines to standard error, or to `sink` (tests).
    public init(format: Format, sink: (@Sendable (String) -> Void)? = nil) {
        self.format = format
        self.sink =
            sink ?? { line in
                var bytes = Array(line.utf8)
                unsafe bytes.withUnsafeMutableBytes { raw in _ = unsafe write(2, raw.baseAddress, raw.count) }
            }
    }

    /// Writes one request line.
    public func request(_ entry: Entry) {
        let route = Self.clean(String(entry.route.prefix(256)))
        // The method is the client's text too: cleaned as the route, so neither can forge a line.
        let method = Self.clean(String(entry.method.prefix(32)))
        let line: String
        switch format {
        case .text:
            var text = "\(method) \(route) \(entry.status.map(String.init) ?? "cut-short") \(entry.bytes)B"
            text += " \(Self.milliseconds(entry.milliseconds))ms"
            if let id = entry.uploadID { text += " id=\(id)" }
            if let client = entry.client { text += " client=\(Self.clean(client))" }
            line = text + "\n"
        case .json:
            var members: [String] = [
                "\"bytes\":\(entry.bytes)", "\"method\":\(Self.quote(method))",
                "\"ms\":\(Self.milliseconds(entry.milliseconds))", "\"route\":\(Self.quote(route))",
                "\"status\":\(entry.status.map(String.init) ?? "null")",
            ]
            if let client = entry.client { members.insert("\"client\":\(Self.quote(client))", at: 1) }
            if let id = entry.uploadID { members.append("\"upload\":\(Self.quote(id))") }
            line = "{" + members.joined(separator: ",") + "}\n"
        }
        lock.withLock { _ in sink(line) }
    }

    /// Writes one event line (start, stop, expiry).
    public func event(_ message: String) {
        let line: String
        switch format {
        case .text: line = Self.clean(message) + "\n"
        case .json: line = "{\"event\":\(Self.quote(message))}\n"
        }
        lock.withLock { _ in sink(line) }
    }

    private static func milliseconds(_ value: Double) -> String {
        String(Double((value * 10).rounded()) / 10)
    }

    /// Control characters (C0, DEL, C1) replaced by `?`, so a request can neither forge a log line nor send a
    /// terminal an escape sequence.
    static func clean(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : $0 }))
    }

    /// A JSON string.
    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
