import AetherLinkLab
import AetherScheduling
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The delay line of AetherLinkLab, by a name of its own here: this module's `LinkLab` is the veth link of `e2e`.
typealias DelayLineLab = AetherLinkLab.LinkLab

/// `aether-bench lab` (root): the link lab's calibration, each line beside what it should be. The link is 80 ms RTT
/// (40 ms each way), 20 Mbit/s up with a queue of 100 ms at the rate, 100 Mbit/s down; iperf3 (Debian) from the
/// client namespace to a server in the server namespace.
/// - ping: 20 echoes; expected the two delays plus serialization.
/// - TCP: iperf3 with no loss (10 s), 1% and 3% i.i.d. uplink loss (30 s: a loss-limited flow sees only a few dozen
///   loss events in 10 s, and its rate varies by a third from run to run), the first 2 s omitted, for CUBIC, BBR and
///   Reno as the client namespace's default; expected the link less headers (1448 of 1500 bytes), for CUBIC and Reno under
///   loss Mathis (MSS / RTT x C / sqrt(p), C = 1.22), for BBR the link less the loss.
/// - UDP: iperf3 10 Mbit/s for 5 s at 1% and 3% loss; expected the set share, with its 3-sigma band.
/// - LTE: a Ghent bicycle trace from its 100th second (mean 10 Mbit/s) with five 1 s outages, 30 s of BBR and of
///   CUBIC, as a share of what the trace could carry in that time.
/// - cost: the relay's CPU time over the run's wall time at 20 and 100 Mbit/s, and how late it released packets.
enum LinkLabBench: BenchSuite {
    static let name = "lab"
    static let runsByDefault = false
    static let summary = "the link lab's calibration (root): ping, TCP by loss and congestion control, UDP loss, LTE"

    static let delay = 0.04
    static let rate = 20.0
    static let goodput = 1448.0 / 1500
    static let port = 5201
    static let iperf = "/usr/bin/iperf3"
    static let ping = "/usr/bin/ping"
    static let trace = "lte_belgium_ghent/report_bicycle_0002.json"
    static let traceOffset = 100.0

    static func run(options: [String]) async throws {
        if let reason = DelayLineLab.unavailableReason() {
            say("lab: skipped: \(reason); run aether-bench lab as root")
            return
        }
        for tool in [iperf, ping] where !FileManager.default.isExecutableFile(atPath: tool) {
            say("lab: skipped: \(tool) is missing; run scripts/install-deps.sh (Debian iperf3, iputils-ping)")
            return
        }
        let directory = "/tmp/aether-bench-lab-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lines = try lines(E2EBench.option("--lines", in: options))
        let calibration = LinkLabCalibration(directory: directory)
        say("lab: load average \(IOBench.loadAverage()); 80 ms RTT, uplink 20 Mbit/s (queue 100 ms), downlink 100")
        say(Measure.pad("line", 34) + Measure.pad("measured", 26) + "expected")
        if lines.contains("ping") { try await calibration.ping() }
        if lines.contains("tcp") { try await calibration.tcp() }
        if lines.contains("udp") { try await calibration.udp() }
        if lines.contains("lte") {
            try await calibration.lte(tracePath: BenchOptions.traces(in: options) + "/" + trace)
        }
        if lines.contains("cost") { try await calibration.cost() }
    }

    static let allLines = ["ping", "tcp", "udp", "lte", "cost"]

    /// The lines `--lines` names (comma-separated), every line without it.
    static func lines(_ text: String?) throws -> [String] {
        guard let text else { return allLines }
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard names.allSatisfy(allLines.contains) else {
            throw BenchError("--lines takes a comma-separated list of \(allLines.joined(separator: ", ")), not \(text)")
        }
        return names
    }

    /// Prints `line` and flushes it.
    static func say(_ line: String) {
        print(line)
        _ = fflush(nil)
    }

    /// One row of the table.
    static func row(_ name: String, _ measured: String, _ expected: String) {
        say(Measure.pad(name, 34) + Measure.pad(measured, 26) + expected)
    }
}

/// The runs behind `aether-bench lab`.
struct LinkLabCalibration {
    let directory: String

    static func configuration(
        loss: Double = 0, rate: LinkLabRate = .constant(megabitsPerSecond: LinkLabBench.rate),
        outages: [LinkLabOutage] = [], control: LinkLabCongestionControl = .cubic
    ) -> LinkLabConfiguration {
        LinkLabConfiguration(
            uplink: LinkLabDirection(
                delay: LinkLabBench.delay, lossRate: loss, rate: rate, queueLimit: .time(0.1), outages: outages),
            downlink: LinkLabDirection(delay: LinkLabBench.delay, rate: .constant(megabitsPerSecond: 100)),
            clientCongestionControl: control)
    }

    /// A lab with an iperf3 server listening in its server namespace.
    func lab(_ configuration: LinkLabConfiguration) async throws -> DelayLineLab {
        let lab = try DelayLineLab(configuration)
        do {
            _ = try lab.start(
                [LinkLabBench.iperf, "-s", "-B", lab.serverAddress, "-p", "\(LinkLabBench.port)"], in: .server,
                logs: directory + "/iperf-server")
            try await lab.waitForListener(port: LinkLabBench.port, timeout: 10)
        } catch {
            lab.tearDown()
            throw error
        }
        return lab
    }

    /// iperf3's JSON report of a run, and the lab's counters over it.
    func iperf(_ lab: DelayLineLab, _ arguments: [String], seconds: Int, restartingClock: Bool = false) async throws
        -> ([String: Any], LinkLabCounters)
    {
        let run = try await lab.run(
            [LinkLabBench.iperf, "-c", lab.serverAddress, "-p", "\(LinkLabBench.port)", "-J", "-t", "\(seconds)"]
                + arguments, timeout: Double(seconds) + 30, logs: directory + "/iperf-client",
            restartingClock: restartingClock)
        guard run.status == 0,
            let report = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
        else { throw BenchError("iperf3 \(arguments.joined(separator: " ")) failed: \(run.errorTail)") }
        return (report, run.counters)
    }

    /// `end.<summary>.<field>` of an iperf3 report.
    static func number(_ report: [String: Any], _ summary: String, _ field: String) throws -> Double {
        guard let end = report["end"] as? [String: Any], let sum = end[summary] as? [String: Any],
            let value = sum[field] as? Double ?? (sum[field] as? Int).map(Double.init)
        else { throw BenchError("iperf3's report has no end.\(summary).\(field)") }
        return value
    }

    static func mbit(_ value: Double) -> String { Measure.formatted(value, decimals: 2) + " Mbit/s" }

    func ping() async throws {
        let lab = try DelayLineLab(Self.configuration())
        defer { lab.tearDown() }
        let run = try await lab.run(
            [LinkLabBench.ping, "-n", "-q", "-c", "20", "-i", "0.2", lab.serverAddress], timeout: 30,
            logs: directory + "/ping")
        // rtt min/avg/max/mdev = 80.123/80.234/80.456/0.050 ms
        guard let line = run.output.split(separator: "\n").first(where: { $0.contains("min/avg/max") }),
            let values = line.split(separator: "=").last?.split(separator: "/").compactMap({
                Double($0.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
            }), values.count >= 3
        else { throw BenchError("ping printed no summary: \(run.output) \(run.errorTail)") }
        // 84-byte echoes: serialization at 20 Mbit/s up and 100 down.
        let expected = 2 * LinkLabBench.delay * 1000 + 84 * 8 / 20e3 + 84 * 8 / 100e3
        LinkLabBench.row(
            "ping rtt min/avg/max",
            values[0..<3].map { Measure.formatted($0, decimals: 2) }.joined(separator: "/") + " ms",
            Measure.formatted(expected, decimals: 2) + " ms")
    }

    func tcp() async throws {
        let link = LinkLabBench.rate * LinkLabBench.goodput
        for loss in [0.0, 0.01, 0.03] {
            let lab = try await lab(Self.configuration(loss: loss))
            defer { lab.tearDown() }
            let mathis = 1448 * 8 / (2 * LinkLabBench.delay) * 1.22 / loss.squareRoot() / 1e6
            for control in LinkLabCongestionControl.allCases {
                try lab.setClientCongestionControl(control)
                let (report, _) = try await iperf(lab, ["-O", "2"], seconds: loss == 0 ? 12 : 32)
                let measured = try Self.number(report, "sum_received", "bits_per_second") / 1e6
                let expected: String
                if loss == 0 {
                    expected = Self.mbit(link) + " (link less headers)"
                } else if control == .bbr {
                    expected = Self.mbit(link * (1 - loss)) + " (link less loss)"
                } else {
                    expected = Self.mbit(mathis) + " (Mathis, C = 1.22)"
                }
                let label = loss == 0 ? "no loss" : "\(Int(loss * 100))% loss"
                LinkLabBench.row("tcp \(label) \(control.rawValue)", Self.mbit(measured), expected)
            }
        }
    }

    func udp() async throws {
        for loss in [0.01, 0.03] {
            let lab = try await lab(Self.configuration(loss: loss))
            defer { lab.tearDown() }
            let (report, counters) = try await iperf(lab, ["-u", "-b", "10M", "-l", "1200"], seconds: 5)
            let lost = try Self.number(report, "sum", "lost_percent") / 100
            let packets = try Self.number(report, "sum", "packets")
            let sigma = (loss * (1 - loss) / max(packets, 1)).squareRoot()
            let drawn = Double(counters.uplink.droppedLoss.packets) / Double(max(counters.uplink.offered.packets, 1))
            LinkLabBench.row(
                "udp \(Int(loss * 100))% loss set",
                Measure.formatted(lost * 100, decimals: 3) + "% lost (lab "
                    + Measure.formatted(drawn * 100, decimals: 2)
                    + "%)",
                Measure.formatted(loss * 100, decimals: 2) + "% +- " + Measure.formatted(3 * sigma * 100, decimals: 2)
                    + " (3 sigma, \(Int(packets)) packets)")
        }
    }

    func lte(tracePath: String) async throws {
        let family = String(LinkLabBench.trace.split(separator: "/").first ?? "")
        guard let trace = try TraceLoader.load(path: tracePath, family: family).first else {
            throw BenchError("\(tracePath) holds no trace")
        }
        let rate = LinkLabRate.trace(trace, startingAt: LinkLabBench.traceOffset)
        let outages = [3.0, 9, 15, 21, 27].map { LinkLabOutage(start: $0, length: 1) }
        let seconds = 30
        for control in [LinkLabCongestionControl.bbr, .cubic] {
            let configuration = Self.configuration(rate: rate, outages: outages, control: control)
            let lab = try await lab(configuration)
            defer { lab.tearDown() }
            let (report, _) = try await iperf(lab, [], seconds: seconds, restartingClock: true)
            let measured = try Self.number(report, "sum_received", "bits_per_second") / 1e6
            let capacity =
                configuration.uplink.capacityMegabits(from: 0, to: Double(seconds)) / Double(seconds)
                * LinkLabBench.goodput
            LinkLabBench.row(
                "lte trace \(control.rawValue)",
                Measure.formatted(measured / capacity * 100, decimals: 1) + "% of capacity",
                Self.mbit(capacity) + " capacity (5 x 1 s outages)")
        }
    }

    func cost() async throws {
        for (rate, control) in [(LinkLabBench.rate, LinkLabCongestionControl.cubic), (100, .bbr)] {
            let lab = try await lab(
                Self.configuration(rate: .constant(megabitsPerSecond: rate), control: control))
            defer { lab.tearDown() }
            let (report, counters) = try await iperf(lab, [], seconds: 8)
            let measured = try Self.number(report, "sum_received", "bits_per_second") / 1e6
            let share = counters.relayCPUSeconds / max(counters.relaySeconds, 1e-9)
            let p50 = counters.lateness.percentileMicroseconds(0.5) ?? 0
            let p99 = counters.lateness.percentileMicroseconds(0.99) ?? 0
            LinkLabBench.row(
                "relay at \(Int(rate)) Mbit/s (\(Self.mbit(measured)))",
                Measure.formatted(share * 100, decimals: 1) + "% of a core",
                rate == LinkLabBench.rate ? "~8% (prototype)" : "~40% (prototype)")
            LinkLabBench.row(
                "release lateness p50/p99",
                "\(p50)/\(p99) us" + (counters.realTimePriority ? "" : " (no real-time priority)"),
                "30-40 us / 150-400 us (prototype)")
        }
    }
}

extension LinkLabRate {
    /// A trace of `Traces/` (read with AetherScheduling's `TraceLoader`) as a lab rate, from `offset` seconds in.
    static func trace(_ trace: ThroughputTrace, startingAt offset: Double) -> LinkLabRate {
        .trace(
            trace.samples.map { .init(duration: $0.duration, megabitsPerSecond: $0.megabitsPerSecond) },
            startingAt: offset)
    }
}
