import Testing

@testable import AetherLinkLab

/// The packets the relay parses and makes: IPv4 and TCP header fields, resets with correct checksums, and the
/// sequence numbers the flow table resets each end of a connection at.
@Suite struct TCPFlowTableTests {
    static let client: UInt32 = 0x0A4D_0001
    static let server: UInt32 = 0x0A4D_0002

    /// An IPv4 + TCP packet (no options) with `payload` bytes, checksums left zero.
    static func segment(
        from source: UInt32, _ sourcePort: UInt16, to destination: UInt32, _ destinationPort: UInt16,
        sequence: UInt32, ack: UInt32, flags: UInt8, payload: Int = 0
    ) -> [UInt8] {
        var bytes = IPv4Packet.reset(
            from: source, port: sourcePort, to: destination, port: destinationPort, sequence: sequence,
            acknowledgement: ack)
        bytes[33] = flags
        bytes += [UInt8](repeating: 0x61, count: payload)
        let length = bytes.count
        bytes[2] = UInt8(length >> 8)
        bytes[3] = UInt8(length & 0xFF)
        return bytes
    }

    /// `bytes` parsed; fails the test when they are absent or do not parse.
    static func parse(_ bytes: [UInt8]?) throws -> IPv4Packet {
        try #require(bytes.flatMap { IPv4Packet($0) })
    }

    /// The one's-complement sum over `bytes` plus `initial`, folded: 0xFFFF when a checksum inside is right.
    static func folded(_ bytes: ArraySlice<UInt8>, initial: UInt32 = 0) -> UInt32 {
        var sum = initial
        var index = bytes.startIndex
        while index < bytes.endIndex {
            sum += UInt32(bytes[index]) << 8 | UInt32(index + 1 < bytes.endIndex ? bytes[index + 1] : 0)
            index += 2
        }
        while sum > 0xFFFF { sum = (sum & 0xFFFF) + (sum >> 16) }
        return sum
    }

    @Test func aResetHasValidChecksumsAndTheFieldsAsked() throws {
        let reset = IPv4Packet.reset(
            from: Self.server, port: 80, to: Self.client, port: 40_000, sequence: 0xDEAD_BEEF, acknowledgement: nil)
        #expect(reset.count == 40)
        #expect(Self.folded(reset[0..<20]) == 0xFFFF)
        let pseudo = (Self.server >> 16) + (Self.server & 0xFFFF) + (Self.client >> 16) + (Self.client & 0xFFFF) + 26
        #expect(Self.folded(reset[20..<40], initial: pseudo) == 0xFFFF)
        let parsed = try #require(IPv4Packet(reset))
        #expect(parsed.source == Self.server && parsed.destination == Self.client && parsed.protocolNumber == 6)
        let tcp = try #require(parsed.tcp)
        #expect(tcp.sourcePort == 80 && tcp.destinationPort == 40_000 && tcp.sequence == 0xDEAD_BEEF)
        #expect(tcp.flags == TCPSegment.reset && tcp.payloadLength == 0)
    }

    @Test func parsingRefusesWhatIsNotAWholeIPv4Header() {
        #expect(IPv4Packet([]) == nil)
        #expect(IPv4Packet([UInt8](repeating: 0x60, count: 40)) == nil)  // IPv6
        var short = IPv4Packet.reset(from: 1, port: 1, to: 2, port: 2, sequence: 0, acknowledgement: nil)
        short[0] = 0x4F  // a 60-byte header in a 40-byte packet
        #expect(IPv4Packet(short) == nil)
        // A TCP header cut short is an IPv4 packet without TCP fields.
        let cut = Array(IPv4Packet.reset(from: 1, port: 1, to: 2, port: 2, sequence: 0, acknowledgement: nil)[0..<30])
        #expect(IPv4Packet(cut)?.tcp == nil)
    }

    @Test func addressesRoundTripAsText() {
        #expect(IPv4Packet.text(Self.client) == "10.77.0.1")
        #expect(IPv4Packet.address("10.77.0.1") == Self.client)
        #expect(IPv4Packet.address("10.77.0") == nil)
        #expect(IPv4Packet.address("10.77.0.256") == nil)
    }

    @Test func anEstablishedConnectionIsResetAtTheDeliveredEndAndTheLastAcknowledgement() throws {
        var table = TCPFlowTable()
        // The client has acknowledged 5000 of the server's bytes; the server has since sent 1000 more (delivered).
        let fromClient = try #require(
            IPv4Packet(
                Self.segment(
                    from: Self.client, 40_000, to: Self.server, 80, sequence: 100, ack: 5000, flags: TCPSegment.ack,
                    payload: 10)))
        table.sent(fromClient, fromClient: true, at: 0)
        table.delivered(fromClient, toClient: false)
        let fromServer = try #require(
            IPv4Packet(
                Self.segment(
                    from: Self.server, 80, to: Self.client, 40_000, sequence: 5000, ack: 110, flags: TCPSegment.ack,
                    payload: 1000)))
        table.sent(fromServer, fromClient: false, at: 0)
        table.delivered(fromServer, toClient: true)

        let towardClient = try table.resets(towardClient: true).map { try #require(IPv4Packet($0)) }
        #expect(towardClient.map { $0.tcp?.sequence } == [6000, 5000])
        #expect(towardClient.allSatisfy { $0.source == Self.server && $0.destination == Self.client })
        #expect(towardClient.allSatisfy { $0.tcp?.sourcePort == 80 && $0.tcp?.destinationPort == 40_000 })
        // The server: 110 delivered and 110 acknowledged: one reset.
        let towardServer = try table.resets(towardClient: false).map { try #require(IPv4Packet($0)) }
        #expect(towardServer.map { $0.tcp?.sequence } == [110])
        #expect(towardServer.first?.destination == Self.server)
    }

    @Test func anOpeningClientIsResetWithAnAcknowledgementOfItsSyn() throws {
        var table = TCPFlowTable()
        let syn = try #require(
            IPv4Packet(
                Self.segment(from: Self.client, 40_001, to: Self.server, 80, sequence: 777, ack: 0, flags: 0x02)))
        table.sent(syn, fromClient: true, at: 0)
        let reset = try Self.parse(table.resets(towardClient: true).first)
        #expect(reset.tcp?.flags == TCPSegment.reset | TCPSegment.ack)
        #expect(reset.tcp?.acknowledgement == 778)
    }

    @Test func aResetSeenRemovesTheConnection() throws {
        var table = TCPFlowTable()
        let data = try #require(
            IPv4Packet(Self.segment(from: Self.client, 1, to: Self.server, 2, sequence: 1, ack: 1, flags: 0x10)))
        table.sent(data, fromClient: true, at: 0)
        #expect(table.flows.count == 1)
        let reset = try #require(
            IPv4Packet(Self.segment(from: Self.server, 2, to: Self.client, 1, sequence: 1, ack: 0, flags: 0x04)))
        table.sent(reset, fromClient: false, at: 0)
        #expect(table.flows.isEmpty)
    }

    @Test func aSegmentIsAnsweredWithAResetAtItsAcknowledgementAndASynIsRefused() throws {
        let data = try #require(
            IPv4Packet(
                Self.segment(
                    from: Self.client, 40_000, to: Self.server, 80, sequence: 9, ack: 4242, flags: 0x18, payload: 5)))
        let answer = try Self.parse(TCPFlowTable.answer(to: data))
        #expect(answer.source == Self.server && answer.destination == Self.client)
        #expect(answer.tcp?.sequence == 4242 && answer.tcp?.flags == TCPSegment.reset)
        let syn = try #require(
            IPv4Packet(Self.segment(from: Self.client, 40_001, to: Self.server, 80, sequence: 50, ack: 0, flags: 0x02)))
        let refusal = try Self.parse(TCPFlowTable.answer(to: syn))
        #expect(refusal.tcp?.flags == TCPSegment.reset | TCPSegment.ack && refusal.tcp?.acknowledgement == 51)
        let reset = try #require(
            IPv4Packet(Self.segment(from: Self.client, 1, to: Self.server, 2, sequence: 1, ack: 0, flags: 0x04)))
        #expect(TCPFlowTable.answer(to: reset) == nil)
    }
}
