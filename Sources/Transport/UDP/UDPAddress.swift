/// An IPv4 address and UDP port.
package struct UDPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in host byte order (127.0.0.1 is `0x7f00_0001`).
    package let ipv4: UInt32
    /// The port.
    package let port: UInt16

    /// Wraps an address and port.
    package init(ipv4: UInt32, port: UInt16) {
        self.ipv4 = ipv4
        self.port = port
    }

    /// Parses `A.B.C.D:PORT` (or `localhost:PORT`) in its one canonical spelling: decimal digits only,
    /// no sign or leading zero in the port. Throws `.invalidArgument` for anything else.
    package init(parsing text: String) throws(TransportError) {
        guard let colon = text.lastIndex(of: ":"), let port = Self.canonicalPort(text[text.index(after: colon)...])
        else {
            throw TransportError(.invalidArgument, "expected HOST:PORT with an IPv4 host, got \(text.debugDescription)")
        }
        let host = String(text[..<colon])
        // Digits and dots only: inet_pton reads a C string, so an embedded NUL would cut the host short.
        let dotted = !host.isEmpty && host.utf8.allSatisfy { $0 == UInt8(ascii: ".") || Self.isDigit($0) }
        guard let address = host == "localhost" ? 0x7f00_0001 : (dotted ? Socket.parseIPv4(host) : nil) else {
            throw TransportError(.invalidArgument, "expected an IPv4 address, got \(host.debugDescription)")
        }
        self.init(ipv4: address, port: port)
    }

    /// A port in decimal, 0 ... 65535, without sign or leading zeros.
    private static func canonicalPort(_ text: Substring) -> UInt16? {
        let digits = text.utf8
        guard (1...5).contains(digits.count), digits.allSatisfy(isDigit),
            digits.count == 1 || digits.first != UInt8(ascii: "0")
        else { return nil }
        return UInt16(text)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// 127.0.0.1 on `port`.
    package static func loopback(port: UInt16) -> UDPAddress { UDPAddress(ipv4: 0x7f00_0001, port: port) }

    /// `A.B.C.D:PORT`.
    package var description: String {
        "\(ipv4 >> 24).\((ipv4 >> 16) & 0xff).\((ipv4 >> 8) & 0xff).\(ipv4 & 0xff):\(port)"
    }
}
