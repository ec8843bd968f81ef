/// The TCP connections crossing the lab, with what each end expects next, so a path change can reset them all,
/// idle ones included.
///
/// A reset is taken only when its sequence number is exactly the receiver's next expected one (RFC 5961; an
/// in-window one draws a challenge ACK instead). That number is not seen directly: it is at most the end of the
/// highest segment delivered to that end and at least the last acknowledgement that end sent. The lab sends a reset
/// at both (the first is exact unless a segment before it was lost); a challenge ACK drawn by the first is answered
/// during the window with a reset at its acknowledgement, which is exact.
struct TCPFlowTable: Sendable {
    /// A connection, named from the client's side.
    struct Key: Hashable, Sendable {
        let client: UInt32
        let clientPort: UInt16
        let server: UInt32
        let serverPort: UInt16
    }

    /// What the lab knows of one end of a connection.
    struct End: Sendable {
        /// The last acknowledgement number it sent.
        var lastAcknowledgement: UInt32?
        /// The end of the highest segment delivered to it.
        var deliveredEnd: UInt32?
        /// The sequence number of its SYN while it has sent nothing with ACK (it is opening the connection).
        var openingSynSequence: UInt32?
    }

    struct Flow: Sendable {
        var client = End()
        var server = End()
        var lastSeen: Int64 = 0
    }

    /// Connections beyond this many make the oldest go (a scan or a flood must not grow the table without bound).
    static let capacity = 65_536

    private(set) var flows: [Key: Flow] = [:]

    /// A segment read from the client's (`fromClient`) or the server's device.
    mutating func sent(_ packet: IPv4Packet, fromClient: Bool, at now: Int64) {
        guard let segment = packet.tcp else { return }
        let key = Self.key(packet, segment, fromClient: fromClient)
        if segment.has(TCPSegment.reset) {
            flows[key] = nil
            return
        }
        if flows[key] == nil && flows.count >= Self.capacity { evict(before: now - 60_000_000_000) }
        var flow = flows[key] ?? Flow()
        flow.lastSeen = now
        update(&flow, client: fromClient) { end in
            if segment.has(TCPSegment.ack) {
                end.lastAcknowledgement = segment.acknowledgement
                end.openingSynSequence = nil
            } else if segment.has(TCPSegment.syn) {
                end.openingSynSequence = segment.sequence
            }
        }
        flows[key] = flow
    }

    /// A segment written to the client's (`toClient`) or the server's device.
    mutating func delivered(_ packet: IPv4Packet, toClient: Bool) {
        guard let segment = packet.tcp, !segment.has(TCPSegment.reset) else { return }
        let key = Self.key(packet, segment, fromClient: !toClient)
        guard var flow = flows[key] else { return }
        update(&flow, client: toClient) { end in
            let next = segment.endSequence
            if let current = end.deliveredEnd, Int32(bitPattern: next &- current) <= 0 { return }
            end.deliveredEnd = next
        }
        flows[key] = flow
    }

    /// Resets toward the client's (`towardClient`) or the server's end of every connection.
    func resets(towardClient: Bool) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        for (key, flow) in flows {
            let end = towardClient ? flow.client : flow.server
            let (from, fromPort, to, toPort) =
                towardClient
                ? (key.server, key.serverPort, key.client, key.clientPort)
                : (key.client, key.clientPort, key.server, key.serverPort)
            if let syn = end.openingSynSequence, end.deliveredEnd == nil {
                // SYN-SENT takes a reset only with an ACK of its SYN.
                packets.append(
                    IPv4Packet.reset(
                        from: from, port: fromPort, to: to, port: toPort, sequence: 0, acknowledgement: syn &+ 1))
                continue
            }
            var sequences: [UInt32] = []
            for candidate in [end.deliveredEnd, end.lastAcknowledgement] {
                if let candidate, !sequences.contains(candidate) { sequences.append(candidate) }
            }
            for sequence in sequences {
                packets.append(
                    IPv4Packet.reset(
                        from: from, port: fromPort, to: to, port: toPort, sequence: sequence, acknowledgement: nil))
            }
        }
        return packets
    }

    /// The reset that answers `packet` (sent back to its sender), so its sender's end is reset at once; nil for a
    /// segment that is itself a reset or not TCP.
    static func answer(to packet: IPv4Packet) -> [UInt8]? {
        guard let segment = packet.tcp, !segment.has(TCPSegment.reset) else { return nil }
        if segment.has(TCPSegment.ack) {
            return IPv4Packet.reset(
                from: packet.destination, port: segment.destinationPort, to: packet.source, port: segment.sourcePort,
                sequence: segment.acknowledgement, acknowledgement: nil)
        }
        // A SYN (or any segment without ACK): refused, as a closed port answers it.
        return IPv4Packet.reset(
            from: packet.destination, port: segment.destinationPort, to: packet.source, port: segment.sourcePort,
            sequence: 0, acknowledgement: segment.endSequence)
    }

    /// Forgets every connection.
    mutating func removeAll() { flows.removeAll() }

    private static func key(_ packet: IPv4Packet, _ segment: TCPSegment, fromClient: Bool) -> Key {
        fromClient
            ? Key(
                client: packet.source, clientPort: segment.sourcePort, server: packet.destination,
                serverPort: segment.destinationPort)
            : Key(
                client: packet.destination, clientPort: segment.destinationPort, server: packet.source,
                serverPort: segment.sourcePort)
    }

    private func update(_ flow: inout Flow, client: Bool, _ change: (inout End) -> Void) {
        if client { change(&flow.client) } else { change(&flow.server) }
    }

    private mutating func evict(before time: Int64) {
        flows = flows.filter { $0.value.lastSeen >= time }
        if flows.count >= Self.capacity { flows.removeAll() }
    }
}
