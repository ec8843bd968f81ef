import AetherIO
import AetherLinkLab
import AetherScheduling
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `aether upload` (native) into `aether serve` across the link lab, on real traces with every connection reset
/// periodically (issue 25's progress guarantee, checked on the real processes): the uplink follows a trace of
/// `Traces/` from a start point, 40 ms each way, 1% loss, queue 100 ms, the client namespace on CUBIC, every
/// connection reset every 10 or 20 s for 1.5 s. The upload completes with the file's bytes stored, and every
/// interval between resets (all are longer than 2 s) in which the link carries two 1 MiB units acknowledges bytes,
/// read from the client's `--json` progress events as they are printed. Root only (network namespaces, TUN devices):
/// skipped otherwise, with the lab's reason.
@Suite(
    .serialized,
    .enabled(if: LabUploadPeers.unavailableReason == nil, Comment(rawValue: LabUploadPeers.unavailableReason ?? "")))
struct LabUploadLiveTests {
    /// One run: a trace file of `Traces/`, where it starts, the upload's size and the seconds between resets.
    struct Case: Sendable, CustomTestStringConvertible {
        let trace: String
        let start: Double
        let mebibytes: Int
        let period: Double
        var testDescription: String { "\(trace) from \(Int(start)) s, \(mebibytes) MiB, resets every \(Int(period)) s" }
    }

    /// A 3G bus (2.9 Mbit/s: 16 MiB take ~35 s, three resets), an LTE bus through a slow stretch (32 MiB in ~28 s)
    /// and a 3G train (12 MiB in ~40 s, two resets 20 s apart).
    static let cases = [
        Case(trace: "hsdpa_norway_3g/norway_bus_1", start: 0, mebibytes: 16, period: 10),
        Case(trace: "lte_belgium_ghent/report_bus_0003.json", start: 120, mebibytes: 32, period: 10),
        Case(trace: "hsdpa_norway_3g/norway_train_13", start: 120, mebibytes: 12, period: 20),
    ]

    static let window = 1.5
    /// An interval that carries less than two 1 MiB units after its first round trips (a 3G dip, an outage) is not
    /// required to add: the link planner promises a whole unit per stream only where the interval carries it.
    static let carriedAtLeast = 2.0 * 1_048_576
    /// The interval's first seconds, in which a new connection's handshakes and first round trips carry no data.
    static let handshakes = 0.5
    /// How long an acknowledgement may take to show: the client prints progress at most every 0.1 s and the test
    /// reads it every 50 ms. Nothing is acknowledged in the cut window that follows an interval, so an
    /// acknowledgement seen this soon after the interval's end came from inside it.
    static let reportingLag = 0.5

    @Test(arguments: cases)
    func theUploadCompletesAndEveryIntervalBetweenResetsAcknowledgesBytes(_ run: Case) async throws {
        let directory = NSTemporaryDirectory() + "aether-labupload-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let family = String(run.trace.split(separator: "/")[0])
        let trace = try #require(
            try TraceLoader.load(path: LabUploadPeers.root + "/Traces/" + run.trace, family: family).first)
        let uplink = LinkLabDirection(
            delay: 0.04, lossRate: 0.01,
            rate: .trace(
                trace.samples.map { .init(duration: $0.duration, megabitsPerSecond: $0.megabitsPerSecond) },
                startingAt: run.start),
            queueLimit: .time(0.1))
        let lab = try LinkLab(
            LinkLabConfiguration(
                uplink: uplink, downlink: LinkLabDirection(delay: 0.04, rate: .constant(megabitsPerSecond: 100)),
                pathChanges: LinkLabPathChanges(kind: .resetConnections, every: run.period, window: Self.window),
                clientCongestionControl: .cubic))
        defer { lab.tearDown() }

        // A non-loopback bind needs bearer tokens.
        let token = UUID().uuidString.replacingOccurrences(of: "-", with: "")
        for (name, text) in [("tokens", "test:\(token)\n"), ("token", token)] {
            _ = FileManager.default.createFile(
                atPath: directory + "/" + name, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        }
        let store = directory + "/store"
        let server = try lab.start(
            [
                LabUploadPeers.aether, "serve", "--dir", store, "--port", "8080", "--bind", lab.serverAddress,
                "--tokens",
                directory + "/tokens",
            ], in: .server, logs: directory + "/serve")
        _ = try await server.waitForLine(startingWith: "listening on", timeout: 60)
        let file = directory + "/input.bin"
        let data = Data(SecureRandom.bytes(run.mebibytes << 20))
        try data.write(to: URL(fileURLWithPath: file))

        lab.restartClock()
        let zero = LinkLab.seconds()
        let before = lab.counters()
        let client = try lab.start(
            [
                LabUploadPeers.aether, "upload", file, "http://\(lab.serverAddress):8080/uploads", "--token-file",
                directory + "/token", "--state-dir", directory + "/state", "--json", "--flags", "-dedup",
            ], in: .client, logs: directory + "/upload")
        // Every progress event with the lab time it was read at.
        var acknowledged: [(time: Double, bytes: Int64)] = []
        var consumed = 0
        func read() {
            let lines = client.output.split(separator: "\n", omittingEmptySubsequences: false)
            let now = LinkLab.seconds() - zero
            // The last element is a line still being written (or empty after the last newline).
            while consumed < lines.count - 1 {
                let line = lines[consumed]
                consumed += 1
                guard line.contains("\"progress\""),
                    let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let value = object["acknowledged"] as? Int
                else { continue }
                acknowledged.append((now, Int64(value)))
            }
        }
        let deadline = zero + 300
        while client.isRunning, LinkLab.seconds() < deadline {
            read()
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        let (status, stopped) = await client.waitForExit(deadline: deadline)
        read()
        let finished = LinkLab.seconds() - zero
        #expect(!stopped, "still running after 300 s; acknowledged \(acknowledged.last?.bytes ?? 0)")
        #expect(status == 0, "exit \(status): \(client.errorTail)")
        let completed = client.output.split(separator: "\n").first { $0.contains("\"completed\"") }
        let object = try #require(
            completed.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] },
            "no completed event: \(client.errorTail)")
        // Resets interrupt the path, they are not loss: no parity shard is sent for them (they once took 41 MiB of a
        // 128 MiB upload on the lab), and what was stored of a cut request is not sent again.
        #expect(object["parity_shards_sent"] as? Int == 0, "\(object["parity_shards_sent"] ?? "absent")")
        let location = try #require(object["location"] as? String)
        let id = String(location.split(separator: "/").last ?? "")
        #expect(FileManager.default.contents(atPath: store + "/objects/" + id) == data, "the stored object differs")
        let counters = lab.counters().since(before)
        let resets = counters.pathChanges
        #expect(resets >= 1, "the upload met no reset: \(finished) s")

        // Each interval between resets that ended before the upload did: [k T + window, (k + 1) T], the first [0, T].
        let total = Int64(run.mebibytes << 20)
        func acknowledgedBy(_ time: Double) -> Int64 {
            acknowledged.last { $0.time <= time }?.bytes ?? 0
        }
        var checked = 0
        var k = 0
        while Double(k + 1) * run.period <= finished {
            let start = k == 0 ? 0 : Double(k) * run.period + Self.window
            let end = Double(k + 1) * run.period
            k += 1
            let earlier = acknowledgedBy(start)
            guard earlier < total else { break }
            let carried = uplink.capacityMegabits(from: start + Self.handshakes, to: end) * 1e6 / 8
            guard carried >= Self.carriedAtLeast else { continue }
            checked += 1
            let after = acknowledgedBy(end + Self.reportingLag)
            #expect(
                after > earlier,
                "nothing acknowledged in [\(start), \(end)] s (the link carried \(Int(carried)) bytes): \(earlier) bytes"
            )
        }
        #expect(checked >= 1, "no interval between resets was checked: \(finished) s, \(resets) resets")
        print(
            "lab upload \(run.testDescription): \(String(format: "%.1f", finished)) s, \(resets) resets, \(checked) intervals "
                + "checked, \(counters.uplink.deliveredTCPPayloadBytes) bytes of TCP payload up")
    }
}

/// Where `LabUploadLiveTests` finds `aether`, and why it is skipped.
enum LabUploadPeers {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The debug `aether` beside the test bundle (a `--build-tests` build makes it), else the package's.
    static let aether: String = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("aether").path
        return FileManager.default.isExecutableFile(atPath: beside) ? beside : root + "/.build/debug/aether"
    }()

    /// Nil when the lab can be built (root, TUN, namespaces) and `aether` is there.
    static let unavailableReason: String? = {
        if let reason = LinkLab.unavailableReason() { return "skipped: \(reason)" }
        if !FileManager.default.isExecutableFile(atPath: aether) { return "skipped: \(aether) is not built" }
        return nil
    }()
}
