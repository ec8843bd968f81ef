import AetherLinkLab
import AetherScheduling
import AetherTestSupport
import Foundation

/// The link-lab lines of `aether-bench e2e` (root): the delay line of AetherLinkLab (docs/LINK-LAB.md), 80 ms RTT,
/// with the servers in its server namespace and every client in its client namespace, one client at a time, each
/// from the lab's clock zero (the trace, its offset and the path-change schedule start again for each).
/// - `lab-mobile`: the uplink follows a trace (`--trace`, from `--trace-start`), queue 100 ms at the current rate,
///   1% i.i.d. loss; downlink 100 Mbit/s; every connection reset every 20 s for 1.5 s; the client namespace's
///   congestion control `--cc` (CUBIC). Native: `aether upload` into `aether serve` against tuspy into tuspyserver;
///   S3: `aether upload s3://` into moto against boto3 `upload_file` and Debian's `aws s3 cp`. Each against its
///   ideal (`E2EIdeal`); a client still running at 4x the ideal is stopped and reported as capped.
/// - `lab-steady`: 20 Mbit/s, 3% loss, queue 100 ms, no path changes: `aether upload` against the link limit
///   (`E2EIdeal.steadyLimit`), beside tuspy and boto3, under `--cc`; then the three again with the client
///   namespace on BBR, for reference.
/// Aether's clients run `--runs` times (the median is reported), the baselines once (not at all with
/// `--no-baselines`).
struct E2ELabLines {
    let tools: E2ETools
    let options: E2ELabOptions

    /// A client still running at this many times its ideal (or the link limit) is stopped.
    static let capFactor = 4.0
    static let delay = 0.04
    static let downlinkRate = 100.0
    static let mobileLoss = 0.01
    static let steadyRate = 20.0
    static let steadyLoss = 0.03
    static let pathChanges = LinkLabPathChanges(kind: .resetConnections, every: 20, window: 1.5)

    var bytes: Int64 { Int64(options.sizeMiB) << 20 }
    var size: String { Measure.sizeLabel(mebibytes: options.sizeMiB) }

    // MARK: lab-mobile

    func mobile() async throws {
        let trace = try options.loadTrace()
        let uplink = LinkLabDirection(
            delay: Self.delay, lossRate: Self.mobileLoss, rate: .trace(trace, startingAt: options.traceStart),
            queueLimit: .time(0.1))
        guard let ideal = E2EIdeal.secondsToCarry(bytes: bytes, uplink, offset: 0) else {
            throw BenchError("the trace \(options.tracePath) cannot carry \(size) in a day")
        }
        let cap = Self.capFactor * ideal
        E2EBench.say(
            "e2e: lab-mobile: \(trace.family)/\(trace.name) from \(Measure.formatted(options.traceStart, decimals: 0)) s"
                + " (trace mean \(Measure.formatted(trace.meanMegabitsPerSecond, decimals: 1)) Mbit/s; "
                + "\(Measure.formatted(Double(bytes) * 8 / ideal / 1e6, decimals: 1)) Mbit/s over the first "
                + "\(E2EBench.seconds(ideal)), the ideal from the start), 1% loss up, 40 ms each way, queue 100 ms, "
                + "down 100 Mbit/s, every connection reset every 20 s for 1.5 s, client \(options.congestionControl.rawValue)"
                + "; \(size), cap \(Int(Self.capFactor))x ideal (\(E2EBench.seconds(cap)))")
        let bench = try await E2ELabSession(
            tools: tools, prefix: "lab-mobile", bytes: bytes, cap: cap,
            configuration: LinkLabConfiguration(
                uplink: uplink,
                downlink: LinkLabDirection(delay: Self.delay, rate: .constant(megabitsPerSecond: Self.downlinkRate)),
                pathChanges: Self.pathChanges, clientCongestionControl: options.congestionControl))
        defer { bench.tearDown() }

        let native = try await bench.repeated("aether upload (native)", runs: options.runs) {
            name, namespace, deadline in
            try await tools.aetherToReceiver(
                file: bench.file, servers: bench.servers, name: name, namespace: namespace, deadline: deadline)
        }
        let tuspy = try await baseline("tuspy", "tuspy -> tuspyserver", bench) { name, namespace, deadline in
            try await tools.tuspy(
                file: bench.file, url: bench.servers.tusURL, name: name, namespace: namespace, deadline: deadline)
        }
        let comparedNative = try await compared("compared build: aether upload (native)", bench) {
            tools, name, namespace, deadline in
            try await tools.aetherToReceiver(
                file: bench.file, servers: bench.servers, name: name, namespace: namespace, deadline: deadline)
        }
        printGroup(
            "e2e_lab_mobile_\(size)_native", ours: native, baselines: comparedNative + tuspy, uplink: uplink,
            targets: "(targets <= 1.15 ideal, <= 0.7 tuspy)")

        let endpoint = bench.servers.motoEndpoint
        let s3 = try await bench.repeated("aether upload s3://", runs: options.runs) { name, namespace, deadline in
            try await tools.aetherToS3(
                file: bench.file, endpoint: endpoint, key: name, name: name, namespace: namespace, deadline: deadline)
        }
        var baselines = try await compared("compared build: aether upload s3://", bench) {
            tools, name, namespace, deadline in
            try await tools.aetherToS3(
                file: bench.file, endpoint: endpoint, key: name, name: name, namespace: namespace, deadline: deadline)
        }
        baselines += try await baseline("boto3", "boto3 upload_file", bench) { name, namespace, deadline in
            try await tools.boto3(
                file: bench.file, endpoint: endpoint, key: name, name: name, namespace: namespace, deadline: deadline)
        }
        if FileManager.default.isExecutableFile(atPath: E2ETools.awsCLI) {
            baselines += try await baseline("awscli", "aws s3 cp (Debian awscli)", bench) {
                name, namespace, deadline in
                try await tools.awsCLI(
                    file: bench.file, endpoint: endpoint, key: name, name: name, namespace: namespace,
                    deadline: deadline)
            }
        } else {
            E2EBench.say("  aws s3 cp skipped: \(E2ETools.awsCLI) is missing (scripts/install-deps.sh installs awscli)")
        }
        printGroup(
            "e2e_lab_mobile_\(size)_s3", ours: s3, baselines: baselines, uplink: uplink,
            targets: "(targets <= 1.3 ideal, re-sent <= 15%, <= 0.6 boto3, <= 0.6 awscli)")
    }

    /// One run of a baseline client, labelled `key` in the ratios; none with `--no-baselines`.
    func baseline(_ key: String, _ label: String, _ bench: E2ELabSession, _ client: E2ELabSession.Client)
        async throws -> [(String, E2ELabRun)]
    {
        guard options.baselines else { return [] }
        return [(key, try await bench.measure(label, client))]
    }

    /// `--runs` runs of another build's client (`--compare-aether`), their median labelled `compared`; none without
    /// the option.
    func compared(
        _ label: String, _ bench: E2ELabSession,
        _ client: @escaping (E2ETools, String, String, Double) async throws -> ClientFinish
    ) async throws -> [(String, E2ELabRun)] {
        guard let path = options.comparedAether else { return [] }
        let other = tools.using(aether: path)
        let runs = try await bench.repeated(label, runs: options.runs) { name, namespace, deadline in
            try await client(other, name, namespace, deadline)
        }
        return E2ELabRun.median(runs).map { [("compared", $0)] } ?? []
    }

    /// The line's summary and a row per client; ratios to the ideal over each client's own span.
    func printGroup(
        _ name: String, ours: [E2ELabRun], baselines: [(String, E2ELabRun)], uplink: LinkLabDirection,
        targets: String
    ) {
        guard let median = E2ELabRun.median(ours) else { return }
        func ideal(_ run: E2ELabRun) -> (ratio: Double, seconds: Double?) {
            let span = run.finish.seconds
            return (
                E2EIdeal.ratioToIdeal(bytes: run.bytes, uplink, offset: run.offset, seconds: span),
                E2EIdeal.idealSeconds(bytes: run.bytes, uplink, offset: run.offset, seconds: span)
            )
        }
        var summary = "ratio_vs_ideal=" + E2ELabRun.yardstickRatio(median, ratio: ideal(median).ratio)
        if name.hasSuffix("_s3") {
            summary +=
                "  resent="
                + (median.finish.finished
                    ? Measure.formatted(median.resentShare * 100, decimals: 1) + "%" : "n/a(not delivered)")
        }
        for (label, baseline) in baselines {
            summary += "  time_ratio_vs_\(label)=" + E2ELabRun.timeRatio(median, baseline).text
        }
        E2EBench.say(
            Measure.pad(name, 32) + Measure.pad(median.countedTime, 12) + summary + "  " + targets)
        for run in [median] + baselines.map(\.1) {
            let (ratio, seconds) = ideal(run)
            let times =
                run.client.hasPrefix("aether") && ours.count > 1
                ? "  runs " + ours.map { $0.outcome }.joined(separator: ", ") : ""
            E2EBench.say(
                Measure.pad("  " + run.client, 32) + Measure.pad(run.outcome, 34) + "ideal over its span "
                    + (seconds.map(E2EBench.seconds) ?? "n/a") + ", ratio "
                    + E2ELabRun.yardstickRatio(run, ratio: ratio)
                    + "  wire " + run.wire + "  cc " + run.congestion + times)
        }
    }

    /// A steady lab: the uplink at a constant rate with i.i.d. loss, queue 100 ms, 40 ms each way; the downlink
    /// 100 Mbit/s; no path changes; the client namespace on `--cc`.
    func steadyLink(megabitsPerSecond: Double, lossRate: Double) -> LinkLabConfiguration {
        LinkLabConfiguration(
            uplink: LinkLabDirection(
                delay: Self.delay, lossRate: lossRate, rate: .constant(megabitsPerSecond: megabitsPerSecond),
                queueLimit: .time(0.1)),
            downlink: LinkLabDirection(delay: Self.delay, rate: .constant(megabitsPerSecond: Self.downlinkRate)),
            clientCongestionControl: options.congestionControl)
    }

    // MARK: lab-capture

    static let captureRate = 50.0
    static let captureLoss = 0.005
    static let captureSmallFiles = 2000
    static let captureSmallBytes = 40 << 10
    static let captureLargeFiles = 4
    static let captureLargeBytes = 64 << 20

    /// A capture on the lab (issue 28's line): 2,000 files of 40 KiB and 4 of 64 MiB (random bytes), 50 Mbit/s up,
    /// 80 ms RTT, 0.5% loss, queue 100 ms, no path changes. `aether upload DIR` into `aether serve`: the small files
    /// alone (`--include 'frames/*'`) against the link rate, in batches (the default) and each as its own upload
    /// (`--no-batch`, for comparison), then the whole job against the link limit (its bytes at 50 Mbit/s).
    func capture() async throws {
        let folder = tools.directory + "/lab-capture"
        let smallBytes = Int64(Self.captureSmallFiles * Self.captureSmallBytes)
        let allBytes = smallBytes + Int64(Self.captureLargeFiles * Self.captureLargeBytes)
        for index in 0..<Self.captureSmallFiles {
            let directory = folder + "/frames/\(index / 100)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try IOBench.makeRandomFile(directory + "/frame-\(index).bin", size: Self.captureSmallBytes)
        }
        try FileManager.default.createDirectory(atPath: folder + "/meshes", withIntermediateDirectories: true)
        for index in 0..<Self.captureLargeFiles {
            try IOBench.makeRandomFile(folder + "/meshes/mesh-\(index).ply", size: Self.captureLargeBytes)
        }
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func limit(_ bytes: Int64) -> Double { Double(bytes) * 8 / (Self.captureRate * 1e6) }
        let cap = max(Self.capFactor * limit(allBytes), 600)
        E2EBench.say(
            "e2e: lab-capture: 50 Mbit/s up, 0.5% loss, 40 ms each way, queue 100 ms, down 100 Mbit/s, no path changes;"
                + " \(Self.captureSmallFiles) files of 40 KiB and \(Self.captureLargeFiles) of 64 MiB, link limit "
                + "\(E2EBench.seconds(limit(allBytes))) (small files alone \(E2EBench.seconds(limit(smallBytes)))), "
                + "client \(options.congestionControl.rawValue)")
        let bench = try await E2ELabSession(
            tools: tools, prefix: "lab-capture", bytes: 1, cap: cap,
            configuration: steadyLink(megabitsPerSecond: Self.captureRate, lossRate: Self.captureLoss))
        defer { bench.tearDown() }
        let variants = [("batched", [String]()), ("--no-batch", ["--no-batch"])]
        for (label, extra) in variants {
            let runs = try await bench.repeated("aether upload DIR, small files, \(label)", runs: options.runs) {
                name, namespace, deadline in
                try await tools.aetherCaptureToReceiver(
                    folder: folder, servers: bench.servers, name: name, namespace: namespace,
                    options: ["--include", "frames/*"] + extra, deadline: deadline)
            }
            guard let median = E2ELabRun.median(runs) else { continue }
            let seconds = median.countedSeconds
            let share = Double(smallBytes) * 8 / seconds / (Self.captureRate * 1e6)
            E2EBench.say(
                Measure.pad("e2e_lab_capture_small_\(label.replacingOccurrences(of: "-", with: ""))", 40)
                    + Measure.pad(median.countedTime, 12) + "link_share=" + Measure.formatted(share, decimals: 2)
                    + "  files/s=" + Measure.formatted(Double(Self.captureSmallFiles) / seconds, decimals: 0)
                    + "  wire " + E2EBench.mebibytesText(median.wireBytes) + " of "
                    + E2EBench.mebibytesText(smallBytes) + "  (target link_share >= 0.8)"
                    + (runs.count > 1 ? "  runs " + runs.map(\.outcome).joined(separator: ", ") : ""))
        }
        try await captureS3(folder: folder, bench: bench)
        let whole = try await bench.repeated("aether upload DIR, whole job", runs: options.runs) {
            name, namespace, deadline in
            try await tools.aetherCaptureToReceiver(
                folder: folder, servers: bench.servers, name: name, namespace: namespace, deadline: deadline)
        }
        if let median = E2ELabRun.median(whole) {
            E2EBench.say(
                Measure.pad("e2e_lab_capture_whole", 40) + Measure.pad(median.countedTime, 12) + "ratio_vs_limit="
                    + Measure.formatted(median.countedSeconds / limit(allBytes), decimals: 2) + "  wire "
                    + E2EBench.mebibytesText(median.wireBytes) + " of " + E2EBench.mebibytesText(allBytes)
                    + "  cc " + median.congestion + "  (target <= 1.15 limit)")
        }
    }

    /// The small files to Ceph RGW on the lab's far side (its daemons in the server namespace, radosgw also on the
    /// server address, port 8083): `aether upload DIR s3://` against Debian's `aws s3 sync` and `rclone copy` (default
    /// settings, as in `aether-bench captures`), each once into a prefix of its own: files per second and the ratio
    /// to the faster of the two (issue 28's target: at least 3).
    func captureS3(folder: String, bench: E2ELabSession) async throws {
        let listen = "\(bench.lab.serverAddress):8083"
        let rgw: RGWProcess
        do {
            rgw = try RGWProcess(buckets: ["aether-bench"], namespace: bench.lab.serverNamespace, listen: listen)
        } catch {
            E2EBench.say("e2e_lab_capture_s3: skipped: Ceph RGW does not start in the lab: \(error)")
            return
        }
        defer { try? rgw.stop() }
        let endpoint = "http://" + listen
        let credentials = rgw.credentialsEnvironment
        let frames = folder + "/frames"
        let files = Double(Self.captureSmallFiles)
        let clients: [(label: String, command: (String) -> [String])] = [
            (
                "aether upload DIR s3://",
                { name in
                    [
                        tools.aether, "upload", frames, "s3://aether-bench/\(name)/", "--endpoint", endpoint,
                        "--s3-flavor", "ceph", "--state-dir", tools.directory + "/\(name)-state", "--json",
                    ]
                }
            ),
            (
                "aws s3 sync",
                { name in
                    [
                        "/usr/bin/env", "-u", "AWS_CA_BUNDLE", "/usr/bin/aws", "--endpoint-url", endpoint, "s3", "sync",
                        frames, "s3://aether-bench/\(name)/", "--only-show-errors",
                    ]
                }
            ),
            (
                "rclone copy",
                { name in
                    [
                        "/usr/bin/env", "-u", "AWS_CA_BUNDLE", "/usr/bin/rclone", "copy", frames,
                        ":s3:aether-bench/\(name)", "--s3-provider", "Ceph", "--s3-endpoint", endpoint,
                        "--s3-access-key-id", rgw.accessKeyID, "--s3-secret-access-key", rgw.secretAccessKey,
                        "--s3-region", rgw.region, "--config", "/dev/null",
                    ]
                }
            ),
        ]
        var runs: [(label: String, run: E2ELabRun)] = []
        for (label, command) in clients {
            guard let executable = command("x").first(where: { $0.hasPrefix("/") && !$0.hasPrefix("/usr/bin/env") }),
                FileManager.default.isExecutableFile(atPath: executable)
            else {
                E2EBench.say("  \(label): skipped (not installed)")
                continue
            }
            let measured = try await bench.repeated(label + " -> RGW", runs: 1) { name, namespace, deadline in
                try await tools.client(
                    command(name), namespace: namespace, environment: credentials, name: name, deadline: deadline)
            }
            if let run = measured.first { runs.append((label, run)) }
        }
        guard let ours = runs.first(where: { $0.label.hasPrefix("aether") })?.run else { return }
        let baselines = runs.filter { !$0.label.hasPrefix("aether") }
        let fastest = baselines.map(\.run.countedSeconds).min()
        E2EBench.say(
            Measure.pad("e2e_lab_capture_s3_small", 40) + Measure.pad(ours.countedTime, 12) + "files/s="
                + Measure.formatted(files / ours.countedSeconds, decimals: 0)
                + (fastest.map {
                    "  files_per_second_vs_fastest=" + Measure.formatted($0 / ours.countedSeconds, decimals: 2)
                }
                    ?? "") + "  (target >= 3)")
        for (label, run) in runs {
            E2EBench.say(
                Measure.pad("  " + label, 32) + Measure.pad(run.outcome, 34) + "files/s="
                    + Measure.formatted(files / run.countedSeconds, decimals: 0) + "  wire "
                    + E2EBench.mebibytesText(run.wireBytes) + "  cc "
                    + run.congestion)
        }
    }

    // MARK: lab-steady

    func steady() async throws {
        let limit = E2EIdeal.steadyLimit(bytes: bytes, megabitsPerSecond: Self.steadyRate, lossRate: Self.steadyLoss)
        let cap = Self.capFactor * limit
        E2EBench.say(
            "e2e: lab-steady: 20 Mbit/s up, 3% loss, 40 ms each way, queue 100 ms, down 100 Mbit/s, no path changes; "
                + "\(size), link limit \(E2EBench.seconds(limit)) (20 Mbit/s less the loss), cap "
                + "\(Int(Self.capFactor))x (\(E2EBench.seconds(cap)))")
        let bench = try await E2ELabSession(
            tools: tools, prefix: "lab-steady", bytes: bytes, cap: cap,
            configuration: steadyLink(megabitsPerSecond: Self.steadyRate, lossRate: Self.steadyLoss))
        defer { bench.tearDown() }
        let controls =
            options.congestionControl == .bbr ? [LinkLabCongestionControl.bbr] : [options.congestionControl, .bbr]
        for control in controls {
            try bench.lab.setClientCongestionControl(control)
            let suffix = control == options.congestionControl ? "" : ", \(control.rawValue)"
            let ours = try await bench.repeated("aether upload (native)" + suffix, runs: options.runs) {
                name, namespace, deadline in
                try await tools.aetherToReceiver(
                    file: bench.file, servers: bench.servers, name: name, namespace: namespace, deadline: deadline)
            }
            let tuspy = try await baseline("tuspy", "tuspy -> tuspyserver" + suffix, bench) {
                name, namespace, deadline in
                try await tools.tuspy(
                    file: bench.file, url: bench.servers.tusURL, name: name, namespace: namespace, deadline: deadline)
            }
            let boto3 = try await baseline("boto3", "boto3 upload_file" + suffix, bench) { name, namespace, deadline in
                try await tools.boto3(
                    file: bench.file, endpoint: bench.servers.motoEndpoint, key: name, name: name,
                    namespace: namespace, deadline: deadline)
            }
            printSteady(
                "e2e_lab_steady_\(size)_\(control.rawValue)", ours: ours, baselines: tuspy + boto3, limit: limit,
                targets: control == options.congestionControl
                    ? "(target <= 1.1 limit)" : "(reference: the client namespace on BBR, ~1.03 expected)")
        }
    }

    func printSteady(
        _ name: String, ours: [E2ELabRun], baselines: [(String, E2ELabRun)], limit: Double, targets: String
    ) {
        guard let median = E2ELabRun.median(ours) else { return }
        var summary = "ratio_vs_limit=" + E2ELabRun.yardstickRatio(median, ratio: median.countedSeconds / limit)
        for (label, baseline) in baselines {
            summary += "  time_ratio_vs_\(label)=" + E2ELabRun.timeRatio(median, baseline).text
        }
        E2EBench.say(
            Measure.pad(name, 32) + Measure.pad(median.countedTime, 12) + summary + "  " + targets)
        for run in [median] + baselines.map(\.1) {
            let times =
                run.client.hasPrefix("aether") && ours.count > 1
                ? "  runs " + ours.map { $0.outcome }.joined(separator: ", ") : ""
            E2EBench.say(
                Measure.pad("  " + run.client, 32) + Measure.pad(run.outcome, 34) + "ratio to limit "
                    + E2ELabRun.yardstickRatio(run, ratio: run.countedSeconds / limit) + "  wire " + run.wire
                    + "  cc " + run.congestion + times)
        }
    }
}

/// One lab of a line with its servers and file: runs clients one at a time, each from the lab's clock zero.
final class E2ELabSession {
    /// A client: given its log name, the client namespace and its deadline (monotonic seconds), how it ended.
    typealias Client = (_ name: String, _ namespace: String, _ deadline: Double) async throws -> ClientFinish

    let lab: DelayLineLab
    let servers: LinkServers
    let file: String
    let bytes: Int64
    let cap: Double
    let prefix: String
    /// The bench's directory, where each client's logs are.
    let logs: String
    /// The lab's clock zero of the last client (monotonic seconds).
    private var lastZero: Double
    private var count = 0

    init(tools: E2ETools, prefix: String, bytes: Int64, cap: Double, configuration: LinkLabConfiguration) async throws {
        lab = try DelayLineLab(configuration)
        lastZero = Measure.now()
        self.prefix = prefix
        logs = tools.directory
        self.bytes = bytes
        self.cap = cap
        file = tools.directory + "/\(prefix).bin"
        do {
            servers = try await tools.startLinkServers(
                namespace: lab.serverNamespace, address: lab.serverAddress, prefix: prefix)
        } catch {
            lab.tearDown()
            throw error
        }
        do {
            try IOBench.makeRandomFile(file, size: Int(bytes))
        } catch {
            servers.stop()
            lab.tearDown()
            throw error
        }
    }

    func tearDown() {
        servers.stop()
        lab.tearDown()
        try? FileManager.default.removeItem(atPath: file)
    }

    /// `runs` runs of `client`.
    func repeated(_ label: String, runs: Int, _ client: Client) async throws -> [E2ELabRun] {
        var results: [E2ELabRun] = []
        for _ in 0..<runs { results.append(try await measure(label, client)) }
        return results
    }

    /// One run of `client`: once the queues drained and outside a path change's window, the lab's clock restarts
    /// and the client starts, with a deadline at the cap; the lab's counters and the controls its connections used.
    func measure(_ label: String, _ client: Client) async throws -> E2ELabRun {
        try await Task.sleep(nanoseconds: 2_000_000_000)
        if let changes = lab.configuration.pathChanges {
            let wait = E2ELabSession.windowRemaining(at: Measure.now() - lastZero, changes)
            if wait > 0 { try await Task.sleep(nanoseconds: UInt64((wait + 0.2) * 1e9)) }
        }
        count += 1
        let name = "\(prefix)-\(count)"
        let sampler = CongestionSampler(
            command: lab.command(["/usr/bin/ss", "-tin", "dst", lab.serverAddress], in: .client))
        let before = lab.counters()
        let zero = Measure.now()
        lab.restartClock()
        lastZero = zero
        let finish: ClientFinish
        do {
            finish = try await client(name, lab.clientNamespace, zero + cap)
        } catch {
            _ = await sampler.finish()
            throw error
        }
        let counters = lab.counters().since(before)
        let congestion = await sampler.finish()
        return E2ELabRun(
            client: label, finish: finish, offset: max(0, (finish.started ?? zero) - zero), counters: counters,
            congestion: congestion, bytes: bytes, cap: cap, logs: logs + "/" + name)
    }

    /// Seconds left of the path change's window open `elapsed` seconds after the clock zero (0 outside one).
    static func windowRemaining(at elapsed: Double, _ changes: LinkLabPathChanges) -> Double {
        guard elapsed >= changes.first else { return 0 }
        let phase = (elapsed - changes.first).truncatingRemainder(dividingBy: changes.period)
        return phase < changes.window ? changes.window - phase : 0
    }
}
