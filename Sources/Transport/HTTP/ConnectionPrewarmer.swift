/// Gets a connection ready before the first chunk (upload-engine v2.2, ConnectionPrewarmer): DNS, TCP, TLS and
/// HTTP/2 are done by a small `OPTIONS *` exchange through the client, whose multi handle then keeps the
/// connection for the requests that follow (they report `connectionReused`).
package struct ConnectionPrewarmer: Sendable {
    /// How far a pre-warm got and what each stage cost.
    package struct Report: Sendable, Equatable {
        /// The protocol the connection speaks (h2 when the server agreed to HTTP/2).
        package let protocolVersion: HTTPProtocolVersion
        /// The name lookup.
        package let nameLookup: Duration
        /// The TCP handshake.
        package let connect: Duration
        /// The TLS handshake (zero in clear text).
        package let tlsHandshake: Duration
        /// The whole pre-warm, the first exchange included.
        package let total: Duration
        /// True when a connection was already open (nothing was set up).
        package let alreadyWarm: Bool
        /// The status the server gave to the warming request (any status warms the connection).
        package let status: Int
    }

    private let client: HTTPClient
    private let version: HTTPVersionPreference
    private let timeouts: HTTPTimeouts

    /// A pre-warmer for `client`; `version` should match the uploads' (`.automatic` gives h2 over TLS when offered).
    package init(
        client: HTTPClient, version: HTTPVersionPreference = .automatic,
        timeouts: HTTPTimeouts = HTTPTimeouts(connect: .seconds(10), idle: .seconds(10), total: .seconds(15))
    ) {
        self.client = client
        self.version = version
        self.timeouts = timeouts
    }

    /// Opens (or finds) a connection to `origin` (`https://host[:port]`; a path is ignored) and leaves it in the
    /// client's cache. Throws what `HTTPClient.send` throws (`.certificateRejected`, `.pinMismatch`, ...).
    package func prewarm(origin: String) async throws(TransportError) -> Report {
        let request = HTTPRequest(
            method: "OPTIONS", url: Self.originURL(origin), version: version, timeouts: timeouts,
            responseBodyLimit: 64 << 10, requestTarget: "*")
        let response = try await client.send(request)
        let telemetry = response.telemetry
        return Report(
            protocolVersion: telemetry.protocolVersion, nameLookup: telemetry.nameLookup, connect: telemetry.connect,
            tlsHandshake: telemetry.tlsHandshake, total: telemetry.total, alreadyWarm: telemetry.connectionReused,
            status: response.status)
    }

    /// `scheme://authority/` of a URL (its path, query and fragment dropped).
    static func originURL(_ url: String) -> String {
        let bytes = Array(url.utf8)
        let separator = Array("://".utf8)
        guard let start = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return url }
        let authorityStart = start + separator.count
        let authorityEnd =
            bytes[authorityStart...].firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            }
            ?? bytes.count
        return String(decoding: bytes[..<authorityEnd], as: UTF8.self) + "/"
    }
}
