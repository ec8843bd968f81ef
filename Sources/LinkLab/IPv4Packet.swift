/// The fields of an IPv4 packet (and of its TCP header, when it carries one) the relay needs; parsed from the bytes
/// a TUN device gives, never trusted beyond their own length.
struct IPv4Packet: Sendable, Equatable {
    /// Source address, host order.
    let source: UInt32
    /// Destination address, host order.
    let destination: UInt32
    /// The IP protocol number (6 is TCP, 17 UDP, 1 ICMP).
    let protocolNumber: UInt8
    /// The TCP header, when this is a TCP packet (the first fragment, header whole).
    let tcp: TCPSegment?

    /// Parses `bytes`; nil when they are not a well-formed IPv4 header.
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 20, bytes[0] >> 4 == 4 else { return nil }
        let headerLength = Int(bytes[0] & 0x0F) * 4
        let totalLength = min(bytes.count, Int(bytes[2]) << 8 | Int(bytes[3]))
        guard headerLength >= 20, headerLength <= totalLength else { return nil }
        source = Self.word(bytes, 12)
        destination = Self.word(bytes, 16)
        protocolNumber = bytes[9]
        let fragmentOffset = (Int(bytes[6]) & 0x1F) << 8 | Int(bytes[7])
        guard protocolNumber == 6, fragmentOffset == 0, totalLength >= headerLength + 20 else {
            tcp = nil
            return
        }
        let t = headerLength
        let dataOffset = Int(bytes[t + 12] >> 4) * 4
        guard dataOffset >= 20, t + dataOffset <= totalLength else {
            tcp = nil
            return
        }
        tcp = TCPSegment(
            sourcePort: UInt16(bytes[t]) << 8 | UInt16(bytes[t + 1]),
            destinationPort: UInt16(bytes[t + 2]) << 8 | UInt16(bytes[t + 3]),
            sequence: Self.word(bytes, t + 4), acknowledgement: Self.word(bytes, t + 8), flags: bytes[t + 13],
            payloadLength: totalLength - t - dataOffset)
    }

    static func word(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    /// `a.b.c.d` of a host-order address.
    static func text(_ address: UInt32) -> String {
        "\(address >> 24).\((address >> 16) & 0xFF).\((address >> 8) & 0xFF).\(address & 0xFF)"
    }

    /// The host-order address of `a.b.c.d`; nil when it is not one.
    static func address(_ text: String) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard part.count <= 3, let byte = UInt8(part) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return value
    }

    /// A 40-byte IPv4 + TCP reset from `source`:`sourcePort` to `destination`:`destinationPort`, sequence number
    /// `sequence`, with the ACK flag and `acknowledgement` when one is given; both checksums filled in.
    static func reset(
        from source: UInt32, port sourcePort: UInt16, to destination: UInt32, port destinationPort: UInt16,
        sequence: UInt32, acknowledgement: UInt32?
    ) -> [UInt8] {
        var packet = [UInt8](repeating: 0, count: 40)
        packet[0] = 0x45
        packet[3] = 40
        packet[6] = 0x40  // don't fragment
        packet[8] = 64  // TTL
        packet[9] = 6
        put(source, into: &packet, at: 12)
        put(destination, into: &packet, at: 16)
        put(UInt32(sourcePort) << 16 | UInt32(destinationPort), into: &packet, at: 20)
        put(sequence, into: &packet, at: 24)
        put(acknowledgement ?? 0, into: &packet, at: 28)
        packet[32] = 0x50  // data offset: 5 words
        packet[33] = TCPSegment.reset | (acknowledgement == nil ? 0 : TCPSegment.ack)
        let ipSum = checksum(packet[0..<20], initial: 0)
        packet[10] = UInt8(ipSum >> 8)
        packet[11] = UInt8(ipSum & 0xFF)
        // The pseudo-header: both addresses, the protocol and the TCP length.
        let pseudo = (source >> 16) + (source & 0xFFFF) + (destination >> 16) + (destination & 0xFFFF) + 6 + 20
        let tcpSum = checksum(packet[20..<40], initial: pseudo)
        packet[36] = UInt8(tcpSum >> 8)
        packet[37] = UInt8(tcpSum & 0xFF)
        return packet
    }

    /// The Internet checksum (RFC 1071) of `bytes`, starting from the 32-bit partial sum `initial`.
    static func checksum(_ bytes: ArraySlice<UInt8>, initial: UInt32) -> UInt16 {
        var sum = initial
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            sum += UInt32(bytes[index]) << 8 | UInt32(bytes[index + 1])
            index += 2
        }
        if index < bytes.endIndex { sum += UInt32(bytes[index]) << 8 }
        while sum >> 16 != 0 { sum = (sum & 0xFFFF) + (sum >> 16) }
        return ~UInt16(sum)
    }

    private static func put(_ value: UInt32, into packet: inout [UInt8], at offset: Int) {
        packet[offset] = UInt8(value >> 24)
        packet[offset + 1] = UInt8((value >> 16) & 0xFF)
        packet[offset + 2] = UInt8((value >> 8) & 0xFF)
        packet[offset + 3] = UInt8(value & 0xFF)
    }
}

/// The TCP header fields of one segment.
struct TCPSegment: Sendable, Equatable {
    static let fin: UInt8 = 0x01
    static let syn: UInt8 = 0x02
    static let reset: UInt8 = 0x04
    static let ack: UInt8 = 0x10

    let sourcePort: UInt16
    let destinationPort: UInt16
    let sequence: UInt32
    let acknowledgement: UInt32
    let flags: UInt8
    /// Payload bytes after the header and its options.
    let payloadLength: Int

    func has(_ flag: UInt8) -> Bool { flags & flag != 0 }

    /// The sequence number after this segment (SYN and FIN count one each).
    var endSequence: UInt32 {
        sequence &+ UInt32(truncatingIfNeeded: payloadLength) &+ (has(Self.syn) ? 1 : 0) &+ (has(Self.fin) ? 1 : 0)
    }
}
