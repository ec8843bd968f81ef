import Foundation
import Synchronization

@testable import AetherTransport

/// A user-space UDP relay between one client and a host that drops 20% of the datagrams each way and
/// duplicates, reorders and replays some of the rest (seeded, so a run is reproducible in its choices).
final class LossyRelay: Sendable {
    struct Stats: Sendable {
        var forwarded = 0
        var dropped = 0
        var duplicated = 0
        var reordered = 0
        var replayed = 0
        /// Datagrams that came in, per direction (0: toward the host, 1: back), one roll of the sequence each.
        var received = [0, 0]
    }

    private struct Direction: Sendable {
        var random: UInt64
        var held: [UInt8]?
        var oldRecords: [[UInt8]] = []
    }

    /// Where the client sends.
    let clientSide: UDPSocket
    private let hostSide: UDPSocket
    private let host: UDPAddress
    private let client = Mutex<UDPAddress?>(nil)
    private let directions: Mutex<[Direction]>
    private let stats = Mutex(Stats())
    private let stopped = Atomic<Bool>(false)
    private let running = Atomic<Int>(0)
    let dropPercent: UInt64

    init(host: UDPAddress, dropPercent: UInt64 = 20, seed: UInt64 = 0x5eed) throws {
        clientSide = try UDPSocket(binding: .loopback(port: 0))
        hostSide = try UDPSocket(binding: .loopback(port: 0))
        self.host = host
        self.dropPercent = dropPercent
        directions = Mutex([Direction(random: seed), Direction(random: seed ^ 0xffff)])
    }

    var address: UDPAddress { clientSide.localAddress }
    var counters: Stats { stats.withLock { $0 } }

    func start() {
        running.store(2, ordering: .releasing)
        Thread.detachNewThread { [self] in
            pump(from: clientSide, direction: 0) { [self] bytes, source in
                client.withLock { $0 = source }
                try? hostSide.send(bytes, to: host)
            }
        }
        Thread.detachNewThread { [self] in
            pump(from: hostSide, direction: 1) { [self] bytes, _ in
                if let target = client.withLock({ $0 }) { try? clientSide.send(bytes, to: target) }
            }
        }
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        while running.load(ordering: .acquiring) > 0 { usleep(1_000) }
    }

    private func pump(from socket: UDPSocket, direction: Int, forward: ([UInt8], UDPAddress) -> Void) {
        defer { running.subtract(1, ordering: .releasing) }
        while !stopped.load(ordering: .acquiring) {
            guard let (bytes, source) = try? socket.receive(timeoutMilliseconds: 20) else { continue }
            for datagram in fate(bytes, direction: direction) { forward(datagram, source) }
        }
    }

    /// What goes out for one datagram that came in.
    private func fate(_ bytes: [UInt8], direction: Int) -> [[UInt8]] {
        directions.withLock { all in
            var d = all[direction]
            defer { all[direction] = d }
            let roll = Self.next(&d.random) % 100
            stats.withLock { $0.received[direction] += 1 }
            var out: [[UInt8]] = []
            if roll < dropPercent {
                stats.withLock { $0.dropped += 1 }
            } else if roll < dropPercent + 5 {
                out = [bytes, bytes]
                stats.withLock { $0.duplicated += 1 }
            } else if roll < dropPercent + 10, d.held == nil {
                d.held = bytes
                stats.withLock { $0.reordered += 1 }
                return []
            } else {
                out = [bytes]
                if roll >= 97, let old = d.oldRecords.first {
                    out.append(old)
                    stats.withLock { $0.replayed += 1 }
                }
            }
            if let held = d.held {
                out.append(held)
                d.held = nil
            }
            if bytes.first == 0x03, d.oldRecords.count < 8 { d.oldRecords.append(bytes) }
            stats.withLock { $0.forwarded += out.count }
            return out
        }
    }

    private static func next(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
