import Foundation

/// An nftables table of the test's own that drops every Nth UDP datagram to and from one port
/// (`numgen inc mod N == N - 1`, a counter per direction: deterministic, not random), created on init and deleted
/// by `delete` (root only).
struct NftablesLoss {
    let name: String

    init(port: UInt16, everyNth: Int) throws {
        name = "aether_test_\(port)"
        let chain = "{ type filter hook output priority 0; policy accept; }"
        try Self.nft(["add", "table", "inet", name])
        do {
            try Self.nft(["add", "chain", "inet", name, "out", chain])
            for direction in ["dport", "sport"] {
                try Self.nft([
                    "add", "rule", "inet", name, "out", "udp", direction, "\(port)", "numgen", "inc", "mod",
                    "\(everyNth)", "==", "\(everyNth - 1)", "counter", "drop",
                ])
            }
        } catch {
            delete()
            throw error
        }
    }

    /// Packets the rule of one direction (`dport`: toward the port, `sport`: from it) dropped so far.
    func dropped(direction: String) -> Int {
        guard let listing = try? Self.nft(["list", "table", "inet", name]) else { return 0 }
        var total = 0
        for line in listing.split(separator: "\n") where line.contains("udp \(direction) ") {
            guard let range = line.range(of: "packets ") else { continue }
            total += Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        return total
    }

    func delete() { _ = try? Self.nft(["delete", "table", "inet", name]) }

    @discardableResult
    static func nft(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nft")
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SessionLive.Failure(description: "nft \(arguments.joined(separator: " ")) failed")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
