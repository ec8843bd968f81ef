import AetherLinkLab

/// One client's run on a link-lab line of `aether-bench e2e`, and how it reads against its yardstick and the others.
struct E2ELabRun {
    /// The client, as printed (`aether upload (native)`).
    let client: String
    /// How it ended.
    let finish: ClientFinish
    /// Seconds after the lab's clock zero at which its span began.
    let offset: Double
    /// The lab's counters over the run.
    let counters: LinkLabCounters
    /// The congestion controls its connections used (`CongestionSampler`).
    let congestion: String
    /// The file's bytes.
    let bytes: Int64
    /// The seconds at which a client still running was stopped, from its start.
    let cap: Double
    /// Its logs' path in the bench's directory, without the `.out`/`.err` suffix.
    var logs = ""

    /// Its time for comparisons: its own when it finished, else the cap.
    var countedSeconds: Double { finish.finished ? finish.seconds : cap }

    /// The counted time as printed: its seconds, or `>=` the cap when it did not deliver.
    var countedTime: String { (finish.finished ? "" : ">=") + E2EBench.seconds(countedSeconds) }

    /// TCP payload that crossed the uplink during the run (data, with HTTP's own bytes).
    var wireBytes: Int64 { counters.uplink.deliveredTCPPayloadBytes }

    /// Payload beyond the file, as a share of it (negative when the file did not get across).
    var resentShare: Double { Double(wireBytes - bytes) / Double(bytes) }

    /// How it ended, as printed: its time, or `capped at ...`, or `gave up (exit N) after ...`.
    var outcome: String {
        if let status = finish.failedStatus {
            return "gave up (exit \(status)) after \(E2EBench.seconds(finish.seconds))"
        }
        return finish.stopped ? "capped at \(E2EBench.seconds(finish.seconds))" : E2EBench.seconds(finish.seconds)
    }

    /// The bytes on the wire against the file: `130.1 MiB of 128.0 MiB (re-sent 1.6%)`, or what got across.
    var wire: String {
        let share = Measure.formatted(resentShare * 100, decimals: 1) + "%"
        return E2EBench.mebibytesText(wireBytes) + " of " + E2EBench.mebibytesText(bytes)
            + (finish.finished ? " (re-sent \(share))" : " (not delivered)")
    }

    /// `ours / theirs` of two runs' times: exact when both finished; a bound when one did not deliver (stopped at
    /// the cap, or gave up: either way its time to deliver is past the cap), `<=` when the baseline did not, `>=`
    /// when ours did not; nil with the reason when neither delivered.
    static func timeRatio(_ ours: E2ELabRun, _ theirs: E2ELabRun) -> (value: Double?, text: String) {
        let value = ours.countedSeconds / theirs.countedSeconds
        let number = Measure.formatted(value, decimals: 2)
        switch (ours.finish.finished, theirs.finish.finished) {
        case (true, true): return (value, number)
        case (true, false): return (nil, "<=" + number)
        case (false, true): return (nil, ">=" + number)
        case (false, false): return (nil, "n/a(neither delivered)")
        }
    }

    /// A ratio to a yardstick (the ideal or the link limit): exact when it finished, a lower bound when capped, nil
    /// when it gave up.
    static func yardstickRatio(_ run: E2ELabRun, ratio: Double) -> String {
        let number = Measure.formatted(ratio, decimals: 2)
        if run.finish.failedStatus != nil { return "n/a (gave up)" }
        return run.finish.stopped ? ">=" + number : number
    }

    /// The median of several runs by counted time (the upper middle for an even count), which the line reports.
    static func median(_ runs: [E2ELabRun]) -> E2ELabRun? {
        let sorted = runs.sorted {
            ($0.countedSeconds, $0.finish.finished ? 0 : 1) < ($1.countedSeconds, $1.finish.finished ? 0 : 1)
        }
        return sorted.isEmpty ? nil : sorted[sorted.count / 2]
    }
}
