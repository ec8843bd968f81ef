import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An emulated link of `aether-bench e2e` (root only): a network namespace of the bench's own joined to this one by a
/// veth pair, clients here and servers there, so TCP sees a real link (no user-space relay).
/// - Rate: htb on this side's veth (the upload direction), one class changed with `tc class change`; a pfifo of
///   100 packets under it. `gso_max_segs 1` on the veth makes the kernel send MTU-sized packets, so the loss below
///   hits single segments and not 64 KiB super-packets.
/// - Loss: an nftables rule in the namespace drops `numgen random mod 100 < P` of the TCP packets arriving from
///   this side (the data direction; acknowledgements are not dropped).
/// - Resets: while a reset window is open, the namespace rejects every TCP packet in and out with a TCP reset, as
///   when a phone changes network (the resets the rejects send are let out, else the output rule would eat them and
///   the window would be a silent blackhole that TCP rides out).
/// - Accounting: a named counter sums the packets longer than 52 bytes (IPv4 header and TCP header with timestamps)
///   that got through, SYNs (longer for their options) left out; payload bytes are its bytes less 52 per packet.
/// Everything lives in the namespace and the veth, so `tearDown()` (deleting the namespace) removes it all.
final class LinkLab: Sendable {
    let namespace: String
    let hostDevice: String
    let hostAddress: String
    let peerAddress: String
    private let table = "aether_bench"
    /// The rate last set, so an unchanged second costs no `tc` call.
    private let rateMbit = Mutex<Double>(0)

    /// Creates the namespace, the veth pair, the shaping and the nftables table with `lossPercent` random loss.
    init(rateMbit: Double, lossPercent: Int) throws {
        let tag = getpid() % 100_000
        namespace = "aeb\(tag)"
        hostDevice = "aebh\(tag)"
        let peerDevice = "aebn\(tag)"
        let subnet = 16 + Int(tag % 200)
        hostAddress = "10.213.\(subnet).1"
        peerAddress = "10.213.\(subnet).2"
        try Self.run(["/usr/sbin/ip", "netns", "add", namespace])
        do {
            try Self.run(["/usr/sbin/ip", "link", "add", hostDevice, "type", "veth", "peer", "name", peerDevice])
            try Self.run(["/usr/sbin/ip", "link", "set", peerDevice, "netns", namespace])
            try Self.run(["/usr/sbin/ip", "addr", "add", "\(hostAddress)/30", "dev", hostDevice])
            try Self.run(["/usr/sbin/ip", "link", "set", hostDevice, "gso_max_segs", "1", "up"])
            try Self.run(["/usr/sbin/ip", "-n", namespace, "addr", "add", "\(peerAddress)/30", "dev", peerDevice])
            try Self.run(["/usr/sbin/ip", "-n", namespace, "link", "set", peerDevice, "gso_max_segs", "1", "up"])
            try Self.run(["/usr/sbin/ip", "-n", namespace, "link", "set", "lo", "up"])
            try Self.run([
                "/usr/sbin/tc", "qdisc", "add", "dev", hostDevice, "root", "handle", "1:", "htb", "default", "10",
            ])
            try Self.run(
                ["/usr/sbin/tc", "class", "add", "dev", hostDevice, "parent", "1:", "classid", "1:10", "htb"]
                    + Self.rateArguments(rateMbit))
            try Self.run([
                "/usr/sbin/tc", "qdisc", "add", "dev", hostDevice, "parent", "1:10", "handle", "10:", "pfifo", "limit",
                "100",
            ])
            self.rateMbit.withLock { $0 = rateMbit }
            let rules = """
                table inet \(table) {
                    counter payload { }
                    chain pre {
                        type filter hook prerouting priority raw; policy accept;
                        ip saddr \(hostAddress) meta l4proto tcp numgen random mod 100 < \(lossPercent) drop
                        ip saddr \(hostAddress) tcp flags & syn == 0 meta length > 52 counter name payload
                    }
                    chain resetIn { type filter hook input priority filter; policy accept; }
                    chain resetOut { type filter hook output priority filter; policy accept; }
                }

                """
            try Self.run(["/usr/sbin/ip", "netns", "exec", namespace, "/usr/sbin/nft", "-f", "-"], input: rules)
        } catch {
            tearDown()
            throw error
        }
    }

    /// Rate `mbit` as htb `rate` and `ceil`, with a quantum that keeps htb from warning at low rates.
    private static func rateArguments(_ mbit: Double) -> [String] {
        let kbit = max(Int((mbit * 1000).rounded()), 64)
        return ["rate", "\(kbit)kbit", "ceil", "\(kbit)kbit", "quantum", "1514", "burst", "15k", "cburst", "15k"]
    }

    /// Changes the link's rate (a no-op when it is already `mbit`).
    func setRate(_ mbit: Double) throws {
        guard rateMbit.withLock({ $0 }) != mbit else { return }
        try Self.run(
            ["/usr/sbin/tc", "class", "change", "dev", hostDevice, "parent", "1:", "classid", "1:10", "htb"]
                + Self.rateArguments(mbit))
        rateMbit.withLock { $0 = mbit }
    }

    /// Opens (every TCP packet in and out is answered with a reset) or closes a reset window.
    func setResetting(_ on: Bool) throws {
        var script = "flush chain inet \(table) resetIn\nflush chain inet \(table) resetOut\n"
        if on {
            script += "add rule inet \(table) resetIn ip saddr \(hostAddress) meta l4proto tcp reject with tcp reset\n"
            // Not the resets themselves: the reject above sends them out through this hook.
            script +=
                "add rule inet \(table) resetOut ip daddr \(hostAddress) tcp flags & rst == 0 reject with tcp reset\n"
        }
        try Self.run(["/usr/sbin/ip", "netns", "exec", namespace, "/usr/sbin/nft", "-f", "-"], input: script)
    }

    /// TCP payload bytes that crossed the link toward the namespace so far.
    func payloadBytes() throws -> Int64 {
        let listing = try Self.run([
            "/usr/sbin/ip", "netns", "exec", namespace, "/usr/sbin/nft", "list", "counter", "inet", table, "payload",
        ])
        func number(after word: String) -> Int64? {
            guard let range = listing.range(of: word + " ") else { return nil }
            return Int64(listing[range.upperBound...].prefix { $0.isNumber })
        }
        guard let packets = number(after: "packets"), let bytes = number(after: "bytes") else {
            throw BenchError("cannot read the payload counter: \(listing)")
        }
        return bytes - 52 * packets
    }

    /// Deletes the namespace (with its veth end, whose peer goes with it, and its nftables table).
    func tearDown() {
        _ = try? Self.run(["/usr/sbin/ip", "netns", "delete", namespace])
        _ = try? Self.run(["/usr/sbin/ip", "link", "delete", hostDevice])
    }

    /// Whether this process can build the link: root, with `ip`, `tc` and `nft` present.
    static func unavailableReason() -> String? {
        guard getuid() == 0 else { return "needs root (ip netns, tc, nft)" }
        for tool in ["/usr/sbin/ip", "/usr/sbin/tc", "/usr/sbin/nft"] where unsafe access(tool, X_OK) != 0 {
            return "\(tool) is missing (Debian: iproute2, nftables)"
        }
        return nil
    }

    /// Runs a tool to completion; throws with its standard error when it fails. Returns its standard output.
    @discardableResult
    static func run(_ arguments: [String], input: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let output = Pipe()
        let error = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = standardInput
        try process.run()
        if let input { standardInput.fileHandleForWriting.write(Data(input.utf8)) }
        try? standardInput.fileHandleForWriting.close()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError(
                "\(arguments.joined(separator: " ")) failed: "
                    + String(decoding: errorData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return String(decoding: outputData, as: UTF8.self)
    }
}
