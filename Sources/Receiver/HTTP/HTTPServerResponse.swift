/// A response: status, header lines and a small body held in memory (status documents, problems, receipts).
public struct HTTPServerResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header lines in order; libmicrohttpd adds `Content-Length` and `Date`.
    public var headers: [(name: String, value: String)]
    /// The body (never a stored object: those are not served).
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of `name` (case-insensitive), if any.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }

    /// Adds a header line.
    public mutating func add(_ name: String, _ value: String) { headers.append((name, value)) }
}
