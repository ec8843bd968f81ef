import Foundation
import Synchronization

/// Which TCP congestion controls a client's connections actually use, read from the kernel while it runs: `ss -tin`
/// in the client namespace (one info line per connection, which names the connection's control) every second,
/// for the connections to the server's address. A client that sets `TCP_CONGESTION` on its sockets shows here
/// with its own choice, not the namespace's default.
final class CongestionSampler: Sendable {
    private let seen = Mutex<[String: Int]>([:])
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts sampling `command` (`ss -tin dst ADDRESS` run in the client namespace) once a second.
    init(command: [String]) {
        let known = Self.availableControls()
        // The task holds the sampler until `finish()` cancels it.
        let sampling = Task { [self] in
            while !Task.isCancelled {
                if let listing = try? LinkLab.run(command) {
                    let names = CongestionSampler.controls(inSocketListing: listing, known: known)
                    seen.withLock { counts in for name in names { counts[name, default: 0] += 1 } }
                }
                try? await Task.sleep(nanoseconds: 1_000_000_000)
            }
        }
        task.withLock { $0 = sampling }
    }

    /// Stops sampling and returns what was seen: each control with the connection-samples that used it, most first
    /// (`cubic x41`), or "none seen" when no connection was open at a sample.
    func finish() async -> String {
        let sampling = task.withLock { $0 }
        sampling?.cancel()
        await sampling?.value
        let counts = seen.withLock { $0 }
        guard !counts.isEmpty else { return "none seen" }
        return counts.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }
            .map { "\($0.key) x\($0.value)" }.joined(separator: ", ")
    }

    /// The controls this kernel offers (`net.ipv4.tcp_available_congestion_control`), or the lab's three.
    static func availableControls() -> Set<String> {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/tcp_available_congestion_control", encoding: .utf8))
        let names = text.map { $0.split(whereSeparator: \.isWhitespace).map(String.init) } ?? []
        return names.isEmpty ? ["cubic", "bbr", "reno"] : Set(names)
    }

    /// The control of each connection in an `ss -tin` listing: on each info line (the indented line under a
    /// connection) the first word that names a control in `known`; one entry per connection.
    static func controls(inSocketListing listing: String, known: Set<String>) -> [String] {
        var names: [String] = []
        for line in listing.split(separator: "\n") where line.first?.isWhitespace == true {
            let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
            if let name = words.first(where: known.contains) { names.append(name) }
        }
        return names
    }
}
