import AetherLinkLab
import Foundation

/// `aether-bench e2e --lines lab-transport` (root): the transport choices of docs/SCHEDULING.md measured on the link
/// lab, `aether upload` (native) into `aether serve`, 32 MiB a run, a steady 20 Mbit/s uplink, 40 ms each way, queue
/// 100 ms, the client namespace on CUBIC (as phones run):
/// - the congestion control of the upload's own connections (`--congestion bbr` against `cubic`) at 1% and 3% loss;
/// - the number of TCP connections (`--parallel 1, 2, 4, 8`) at 3% loss under CUBIC, and 1 and 4 under BBR. One
///   connection is also what HTTP/2 streams multiplexed on one connection get: one congestion window that every
///   loss halves for all of them (`aether serve` speaks HTTP/1.1, so the client cannot multiplex to it);
/// - the request size (`--chunk-size 1, 4, 16 MiB`, 4 connections, BBR) at 1% loss, without path changes and with
///   every connection reset every 10 s for 1.5 s, beside the scheduler's own choice.
/// Each cell prints its time (a run still going at 60 s is stopped, and its rate is what it had acknowledged by
/// then), the file's rate, the ratio to the link limit (the bytes at 20 Mbit/s less the loss), the bytes on the wire
/// against the file, and the congestion control its connections used.
struct E2ETransportLines {
    let tools: E2ETools
    let options: E2ELabOptions

    static let sizeMiB = 32
    static let cap = 60.0
    static let rate = 20.0

    /// One measured setting: its label and the options `aether upload` gets.
    struct Cell {
        let label: String
        let options: [String]
    }

    /// One lab of the line: its loss, its path changes, and the cells run on it.
    struct Condition {
        let name: String
        let loss: Double
        let pathChanges: LinkLabPathChanges?
        let cells: [Cell]
    }

    static let conditions: [Condition] = [
        Condition(
            name: "loss1", loss: 0.01, pathChanges: nil,
            cells: [
                Cell(label: "bbr", options: ["--congestion", "bbr"]),
                Cell(label: "cubic", options: ["--congestion", "cubic"]),
                Cell(label: "bbr_p4_req1M", options: ["--congestion", "bbr", "--parallel", "4", "--chunk-size", "1M"]),
                Cell(label: "bbr_p4_req4M", options: ["--congestion", "bbr", "--parallel", "4", "--chunk-size", "4M"]),
                Cell(
                    label: "bbr_p4_req16M", options: ["--congestion", "bbr", "--parallel", "4", "--chunk-size", "16M"]),
            ]),
        Condition(
            name: "loss3", loss: 0.03, pathChanges: nil,
            cells: [
                Cell(label: "bbr", options: ["--congestion", "bbr"]),
                Cell(label: "cubic", options: ["--congestion", "cubic"]),
                Cell(label: "cubic_p1", options: ["--congestion", "cubic", "--parallel", "1"]),
                Cell(label: "cubic_p2", options: ["--congestion", "cubic", "--parallel", "2"]),
                Cell(label: "cubic_p4", options: ["--congestion", "cubic", "--parallel", "4"]),
                Cell(label: "cubic_p8", options: ["--congestion", "cubic", "--parallel", "8"]),
                Cell(label: "bbr_p1", options: ["--congestion", "bbr", "--parallel", "1"]),
                Cell(label: "bbr_p4", options: ["--congestion", "bbr", "--parallel", "4"]),
            ]),
        Condition(
            name: "loss1_resets10s", loss: 0.01,
            pathChanges: LinkLabPathChanges(kind: .resetConnections, every: 10, window: 1.5),
            cells: [
                Cell(label: "bbr_scheduler", options: ["--congestion", "bbr"]),
                Cell(label: "bbr_p4_req1M", options: ["--congestion", "bbr", "--parallel", "4", "--chunk-size", "1M"]),
                Cell(label: "bbr_p4_req4M", options: ["--congestion", "bbr", "--parallel", "4", "--chunk-size", "4M"]),
                Cell(
                    label: "bbr_p4_req16M", options: ["--congestion", "bbr", "--parallel", "4", "--chunk-size", "16M"]),
            ]),
    ]

    var bytes: Int64 { Int64(Self.sizeMiB) << 20 }

    func run() async throws {
        E2EBench.say(
            "e2e: lab-transport: aether upload (native) into aether serve, \(Self.sizeMiB) MiB a run, 20 Mbit/s up, "
                + "40 ms each way, queue 100 ms, down 100 Mbit/s, client namespace cubic (--congestion sets the "
                + "upload's own connections), stopped at \(Int(Self.cap)) s; \(options.runs) run(s) a cell")
        for condition in Self.conditions {
            let limit = E2EIdeal.steadyLimit(bytes: bytes, megabitsPerSecond: Self.rate, lossRate: condition.loss)
            let bench = try await E2ELabSession(
                tools: tools, prefix: "lab-transport-\(condition.name)", bytes: bytes, cap: Self.cap,
                configuration: LinkLabConfiguration(
                    uplink: LinkLabDirection(
                        delay: E2ELabLines.delay, lossRate: condition.loss,
                        rate: .constant(megabitsPerSecond: Self.rate), queueLimit: .time(0.1)),
                    downlink: LinkLabDirection(
                        delay: E2ELabLines.delay, rate: .constant(megabitsPerSecond: E2ELabLines.downlinkRate)),
                    pathChanges: condition.pathChanges, clientCongestionControl: .cubic))
            defer { bench.tearDown() }
            for cell in condition.cells {
                let runs = try await bench.repeated(cell.label, runs: options.runs) { name, namespace, deadline in
                    try await tools.aetherToReceiver(
                        file: bench.file, servers: bench.servers, name: name, namespace: namespace,
                        options: cell.options, deadline: deadline)
                }
                guard let median = E2ELabRun.median(runs) else { continue }
                let spread =
                    runs.count > 1 ? "  runs " + runs.map { Self.rateText($0) }.joined(separator: ", ") : ""
                E2EBench.say(
                    Measure.pad("e2e_lab_transport_\(condition.name)_\(cell.label)", 50)
                        + Measure.pad(median.countedTime, 11) + Measure.pad(Self.rateText(median), 28)
                        + "ratio_vs_limit="
                        + E2ELabRun.yardstickRatio(median, ratio: median.countedSeconds / limit) + "  wire "
                        + median.wire + "  cc " + median.congestion + spread)
            }
        }
    }

    /// The file's rate over the run, or for a run that did not deliver, what it had acknowledged by the cap.
    static func rateText(_ run: E2ELabRun) -> String {
        let acknowledged = run.finish.finished ? run.bytes : acknowledgedBytes(logs: run.logs)
        let rate = Double(acknowledged) * 8 / run.countedSeconds / 1e6
        let text = Measure.formatted(rate, decimals: 2) + " Mbit/s"
        return run.finish.finished ? text : text + " (" + E2EBench.mebibytesText(acknowledged) + " acked)"
    }

    /// The acknowledged bytes of the last `progress` event an `aether upload --json` printed into `logs`.out.
    static func acknowledgedBytes(logs: String) -> Int64 {
        let text = (try? String(contentsOfFile: logs + ".out", encoding: .utf8)) ?? ""
        return acknowledgedBytes(jsonLines: text)
    }

    /// The acknowledged bytes of the last `progress` event among `--json` lines (0 before any).
    static func acknowledgedBytes(jsonLines text: String) -> Int64 {
        for line in text.split(separator: "\n").reversed() where line.contains("\"progress\"") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["event"] as? String == "progress", let value = object["acknowledged"] as? Int
            else { continue }
            return Int64(value)
        }
        return 0
    }
}
