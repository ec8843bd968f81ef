import AetherIO
import Foundation
import Testing

/// Faults between `aether upload` and `aether serve` (issue 17): connection resets and a receiver that stops
/// answering (through `FaultRelay`, on 127.0.0.1), 5% packet loss (nftables on the receiver's own port, root
/// only). The upload completes byte-identical or fails with a typed error within a bound; it never hangs.
@Suite(.serialized) struct UploadFaultLiveTests: SeededContent {
    static func port(_ url: String) throws -> Int { try #require(Int(url.split(separator: ":").last ?? "")) }

    static func arguments(_ path: String, _ url: String, _ state: String, chunk: String = "256K") -> [String] {
        [
            "upload", path, url + "/uploads", "--state-dir", state, "--json", "--chunk-size", chunk, "--parallel",
            "2", "--protocol", "native",
        ]
    }

    static func acknowledged(_ child: UploadChild) -> Int {
        child.events.filter { $0["event"] as? String == "chunk" }.count
    }

    static func waitFor(_ parts: Int, _ child: UploadChild) throws {
        try SessionLive.wait("\(parts) acknowledged parts", timeout: 120) {
            acknowledged(child) >= parts || !child.process.isRunning
        }
    }

    @Test func connectionResetsDuringTheUploadAreRetriedAndTheObjectIsByteIdentical() throws {
        let receiver = try ReceiverChild()
        let relay = try FaultRelay(targetPort: try Self.port(receiver.url))
        let (path, state, content) = try UploadCommandLiveTests.file(16 << 20, seed: 911)
        let child = try UploadChild(Self.arguments(path, relay.url, state, chunk: "128K"))
        for parts in [8, 24, 40, 56, 72, 88, 104] {
            try Self.waitFor(parts, child)
            try relay.send("reset")
        }
        let status = try child.wait(timeout: 120)
        #expect(status == 0, "\(child.stderr)")
        let resets = try relay.counters.resets
        #expect(resets == 7)
        #expect(try relay.counters.accepted > 1)
        let location = try #require(try UploadCommandLiveTests.completed(child)["location"] as? String)
        #expect(try receiver.object(location) == content)
        // The resets hit parts on the wire: they were retried (connectionClosed), not waited out.
        let retries = child.events.filter { $0["event"] as? String == "retry" }.count
        #expect(retries >= 1)
        #expect(!child.events.contains { ($0["cause"] as? String)?.hasPrefix("timedOut") == true })
        print("connection resets: 7 resets, \(retries) retries, \(try relay.counters.accepted) connections")
    }

    /// Regression: the Byzantine spot check before completion was sent once, so a reset (or a receiver restarting)
    /// at that moment failed an upload whose every part was stored.
    @Test func aConnectionResetDuringTheByzantineChallengeIsRetriedAndTheUploadCompletes() throws {
        let receiver = try ReceiverChild()
        let relay = try FaultRelay(targetPort: try Self.port(receiver.url))
        try relay.send("reset-on /challenges")
        let (path, state, content) = try UploadCommandLiveTests.file(2 << 20, seed: 915)
        let child = try UploadChild(Self.arguments(path, relay.url, state))
        let status = try child.wait(timeout: 120)
        #expect(status == 0, "\(child.stderr)")
        #expect(try relay.counters.resets == 1)
        // The reset request is retried: by the uploader (a retry event for index -1), or, when it went over a
        // kept-alive connection, by libcurl itself, which sends a request again on a fresh connection when a
        // reused one dies before any answer. Either way the spot check must end verified.
        if let retry = child.events.first(where: { $0["event"] as? String == "retry" }) {
            #expect(retry["index"] as? Int == -1)
        }
        let done = try UploadCommandLiveTests.completed(child)
        #expect((done["server_verified"] as? [String])?.first == "byzantine-sample")
        let location = try #require(done["location"] as? String)
        #expect(try receiver.object(location) == content)
    }

    @Test func aReceiverThatNeverAnswersEndsTheUploadWithATypedErrorWithinABound() throws {
        let receiver = try ReceiverChild()
        let relay = try FaultRelay(targetPort: try Self.port(receiver.url))
        try relay.send("blackhole")
        let (path, state, _) = try UploadCommandLiveTests.file(1 << 20, seed: 912)
        let started = Date()
        let child = try UploadChild(Self.arguments(path, relay.url, state))
        // The bound: the probe's connect and idle limits (10 s, 30 s) with room for a loaded machine.
        let status = try child.wait(timeout: 90)
        let seconds = Date().timeIntervalSince(started)
        #expect(status == 1, "\(child.stdout) \(child.stderr)")
        let failed = try #require(child.events.last { $0["event"] as? String == "failed" }, "\(child.stdout)")
        let message = try #require(failed["message"] as? String)
        #expect(message.contains("timedOut") || message.contains("timed out"), "\(message)")
        #expect(try relay.counters.accepted >= 1)
        print("never answering receiver: exit \(status) after \(Int(seconds)) s: \(message)")
    }

    @Test func aReceiverThatStopsAnsweringMidwayTimesOutTheStalledPartsAndTheUploadFinishesWhenItAnswersAgain()
        throws
    {
        let receiver = try ReceiverChild()
        let relay = try FaultRelay(targetPort: try Self.port(receiver.url))
        let (path, state, content) = try UploadCommandLiveTests.file(8 << 20, seed: 913)
        let child = try UploadChild(Self.arguments(path, relay.url, state))
        try Self.waitFor(6, child)
        try relay.send("blackhole")
        // Longer than the 30 s idle limit of a part: the stalled sends must time out and be retried.
        try SessionLive.wait("a timed-out part", timeout: 60) {
            child.events.contains { $0["event"] as? String == "retry" } || !child.process.isRunning
        }
        try relay.send("pass")
        let status = try child.wait(timeout: 120)
        #expect(status == 0, "\(child.stderr)")
        let retry = try #require(child.events.first { $0["event"] as? String == "retry" })
        #expect((retry["cause"] as? String)?.hasPrefix("timedOut") == true, "\(retry)")
        let location = try #require(try UploadCommandLiveTests.completed(child)["location"] as? String)
        #expect(try receiver.object(location) == content)
    }

    @Test(.enabled(if: getuid() == 0, "nftables needs root"))
    func fivePercentPacketLossOnTheReceiversPortStillCompletesByteIdentical() throws {
        let receiver = try ReceiverChild()
        let port = try Self.port(receiver.url)
        let table = "aether_torture_\(port)"
        try NftablesLoss.nft(["add", "table", "inet", table])
        defer { _ = try? NftablesLoss.nft(["delete", "table", "inet", table]) }
        try NftablesLoss.nft([
            "add", "chain", "inet", table, "out", "{ type filter hook output priority 0; policy accept; }",
        ])
        for direction in ["dport", "sport"] {
            try NftablesLoss.nft([
                "add", "rule", "inet", table, "out", "tcp", direction, "\(port)", "numgen", "random", "mod", "100",
                "<", "5", "counter", "drop",
            ])
        }
        let (path, state, content) = try UploadCommandLiveTests.file(8 << 20, seed: 914)
        let child = try UploadChild(Self.arguments(path, receiver.url, state))
        let status = try child.wait(timeout: 180)
        #expect(status == 0, "\(child.stderr)")
        let location = try #require(try UploadCommandLiveTests.completed(child)["location"] as? String)
        #expect(try receiver.object(location) == content)
        let listing = try NftablesLoss.nft(["list", "table", "inet", table])
        let dropped = listing.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "packets ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(dropped.reduce(0, +) > 0)
        print("5% loss: \(dropped.reduce(0, +)) packets dropped")
    }
}
