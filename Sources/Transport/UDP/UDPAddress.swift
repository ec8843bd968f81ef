/// An IPv4 address and UDP port.
public struct UDPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in host byte order (127.0.0.1 is `0x7f00_0001`).
    public let ipv4: UInt32
    /// The port.
    public let port: UInt16

    /// Wraps an address and port.
    public init(ipv4: UInt32, port: UInt16) {
        self.ipv4 = ipv4
        self.port = port
    }

    /// Parses `A.B.C.D:PORT` (or `localhost:PORT`). Throws `.invalidArgument` for anything else.
    public init(parsing text: String) throws(TransportError) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw TransportError(.invalidArgument, "expected HOST:PORT with an IPv4 host, got \(text)")
        }
        let host = String(text[..<colon])
        guard let address = host == "localhost" ? 0x7f00_0001 : Socket.parseIPv4(host) else {
            throw TransportError(.invalidArgument, "expected an IPv4 address, got \(host)")
        }
        self.init(ipv4: address, port: port)
    }

    /// 127.0.0.1 on `port`.
    public static func loopback(port: UInt16) -> UDPAddress { UDPAddress(ipv4: 0x7f00_0001, port: port) }

    /// `A.B.C.D:PORT`.
    public var description: String {
        "\(ipv4 >> 24).\((ipv4 >> 16) & 0xff).\((ipv4 >> 8) & 0xff).\(ipv4 & 0xff):\(port)"
    }
}
