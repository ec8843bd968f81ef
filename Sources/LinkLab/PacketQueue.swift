/// A packet in the lab: its IP bytes and one time (when it entered the queue, or when the delay line releases it).
struct LabPacket: Sendable {
    /// The IPv4 packet as read from a TUN device.
    var bytes: [UInt8]
    /// Nanoseconds on the relay's monotonic clock.
    var time: Int64
}

/// A FIFO of packets: an array and a head index, compacted when the consumed prefix grows large (amortised O(1)).
struct PacketQueue: Sendable {
    private var storage: [LabPacket] = []
    private var head = 0

    /// Packets waiting.
    var count: Int { storage.count - head }
    /// Whether none wait.
    var isEmpty: Bool { head == storage.count }
    /// The oldest packet.
    var first: LabPacket? { head < storage.count ? storage[head] : nil }

    mutating func append(_ packet: LabPacket) { storage.append(packet) }

    mutating func popFirst() -> LabPacket? {
        guard head < storage.count else { return nil }
        let packet = storage[head]
        storage[head].bytes = []
        head += 1
        if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return packet
    }

    /// Empties the queue; returns what it held (packets, bytes).
    mutating func removeAll() -> (packets: Int64, bytes: Int64) {
        let bytes = storage[head...].reduce(Int64(0)) { $0 + Int64($1.bytes.count) }
        let packets = Int64(count)
        storage.removeAll(keepingCapacity: true)
        head = 0
        return (packets, bytes)
    }
}
