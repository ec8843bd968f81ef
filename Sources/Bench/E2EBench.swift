import AetherIO
import AetherLinkLab
import AetherTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `aether-bench e2e`: the release `aether` command end to end against the clients people use today, each line a
/// ratio of completion times measured in the same run (lower is better for Aether):
/// 1. `s3`: 1 GiB (`--size-mib N`) to Ceph RGW on 127.0.0.1 (`RGWProcess`, started by the bench): `aether upload
///    s3://... --s3-flavor ceph` (S3Backend via ChunkedUploader, every part's signed SHA-256 checked by RGW)
///    against boto3's `upload_file` (default TransferConfig), Debian's `aws s3 cp` and `rclone copyto`, same
///    server, the order rotated each run, median of 3 (`--runs N`). Target: <= 0.9 of the fastest of them.
/// 2. `badlink` (root, the old emulation): 20 Mbit/s with 3% random loss (`LinkLab`: veth, htb, nftables, no
///    delay): `aether upload` to `aether serve` against a raw TCP stream of the same bytes on the same link (the
///    limit), median of 3 each; boto3 (moto) and tuspy (tuspyserver) once. 64 MiB (`--link-mib N`). Target <= 1.05.
/// 3. `mobile` (root, the old emulation): the rate follows an LTE trace second by second, 1% loss, every
///    connection reset for 1.5 s every 20 s: Aether against boto3 (moto, standard retries) and tuspy (tuspyserver,
///    8 MiB chunks, retries, resume); completion time and re-sent bytes of each; a client still running at 3x the
///    link's limit is stopped and counted at that time. 128 MiB (twice `--link-mib`). Target <= 0.8.
/// 4. `lab-mobile` (root, the link lab: 80 ms RTT, `E2ELabLines`): the uplink follows `--trace` from
///    `--trace-start` (default a held-out LTE trace of Traces/), 1% loss, queue 100 ms, downlink 100 Mbit/s, every
///    connection reset for 1.5 s every 20 s, client `--cc` (CUBIC); 128 MiB (`--size-mib`). Native `aether upload`
///    into `aether serve` against tuspy (targets <= 1.15x ideal, <= 0.7x tuspy); `aether upload s3://` into moto
///    against boto3 and Debian's `aws s3 cp` (<= 1.3x ideal, re-sent <= 15%, <= 0.6x each). The ideal is the file
///    at the trace's mean rate over the client's own span (`E2EIdeal`); a client still running at 4x is capped.
/// 5. `lab-steady` (root, the link lab): 20 Mbit/s, 80 ms RTT, 3% loss: `aether upload` against the link limit (the
///    bytes at 20 Mbit/s less the loss; target <= 1.1) beside tuspy and boto3, client `--cc`; then `aether upload`,
///    tuspy and boto3 again with the client namespace on BBR, for reference.
/// 6. `lab-transport` (root, the link lab, `E2ETransportLines`): the transport choices of docs/SCHEDULING.md, measured:
///    the congestion control per connection, the number of connections, the request size, at 1% and 3% loss and
///    with resets every 10 s.
/// 7. `lab-capture` (root, the link lab): a capture of 2,000 files of 40 KiB and 4 of 64 MiB at 50 Mbit/s, 80 ms RTT,
///    0.5% loss into `aether serve`: the small files alone against the link rate (target >= 0.8 of it) at the default
///    `--files`, at 32 and at 64, then the whole job against the link limit (target <= 1.15).
/// Every lab line prints the bytes that crossed the uplink against the file and the congestion control each
/// client's connections used (read from the kernel while it ran). Aether's lab clients run `--runs N` times (the
/// median is reported), the baselines once. The Python side runs from the project's `.venv`
/// (`scripts/setup-venv.sh`). Lines 2 to 7 need root and are skipped with a line saying so otherwise.
enum E2EBench: BenchSuite {
    static let name = "e2e"
    static let runsByDefault = false
    static let summary =
        "aether upload end to end: S3 on RGW vs boto3/aws/rclone; old and link-lab bad and LTE links vs tuspy/boto3/awscli (root)"

    static let allLines = ["s3", "badlink", "mobile", "lab-mobile", "lab-steady", "lab-transport", "lab-capture"]

    static func run(options: [String]) async throws {
        let lines = try lines(option("--lines", in: options))
        let sizeMiB = try mebibytes(option("--size-mib", in: options), default: 1024)
        let linkMiB = try mebibytes(option("--link-mib", in: options), default: 64)
        let labOptions = try E2ELabOptions.parse(options, outOfSample: BenchOptions.projectOutOfSample)
        // The lab and the old mobile line replay the same trace from the same offset, read before anything runs.
        let trace = lines.contains("lab-mobile") || lines.contains("mobile") ? try labOptions.loadTrace() : nil

        let directory = "/tmp/aether-bench-e2e-\(getpid())"
        guard unsafe mkdir(directory, 0o700) == 0 else { throw BenchError("cannot create \(directory)") }
        let keep = options.contains("--keep-logs")
        defer {
            if keep {
                say("e2e: the clients' and servers' logs are kept in \(directory)")
                _ = IOBaseline.run(["/usr/bin/find", directory, "-name", "*.bin", "-delete"])
            } else {
                _ = IOBaseline.run(["/bin/rm", "-rf", directory])
            }
        }
        guard let tools = try E2ETools(directory: directory) else { return }
        say("e2e: load average \(IOBench.loadAverage()); times are wall seconds, ratios Aether/baseline")

        if lines.contains("s3") {
            let runs = try option("--runs", in: options).map { text throws in
                guard let runs = Int(text), (1...21).contains(runs) else {
                    throw BenchError("--runs takes 1...21, not \(text)")
                }
                return runs
            }
            try await s3Line(tools: tools, sizeMiB: sizeMiB, runs: runs ?? 3)
        }
        let old = lines.filter { $0 == "badlink" || $0 == "mobile" }
        if !old.isEmpty, let reason = LinkLab.unavailableReason() {
            say("e2e: \(old.joined(separator: " and ")) skipped: \(reason); run aether-bench e2e as root")
        } else {
            if old.contains("badlink") { try await badLinkLine(tools: tools, sizeMiB: linkMiB) }
            if old.contains("mobile"), let trace {
                // Twice the bad link's size, so the upload spans several reset windows (128 MiB: about 62 s of the
                // default trace).
                try await mobileLine(
                    tools: tools, sizeMiB: 2 * linkMiB, trace: LinkTrace(trace, startingAt: labOptions.traceStart))
            }
        }
        let lab = lines.filter { $0.hasPrefix("lab-") }
        if !lab.isEmpty, let reason = DelayLineLab.unavailableReason() {
            say("e2e: \(lab.joined(separator: " and ")) skipped: \(reason); run aether-bench e2e as root")
            return
        }
        let labLines = E2ELabLines(tools: tools, options: labOptions)
        if lab.contains("lab-mobile") { try await labLines.mobile() }
        if lab.contains("lab-steady") { try await labLines.steady() }
        if lab.contains("lab-capture") { try await labLines.capture() }
        if lab.contains("lab-transport") { try await E2ETransportLines(tools: tools, options: labOptions).run() }
    }

    /// The lines `--lines` names (comma-separated), every line without it.
    static func lines(_ text: String?) throws -> [String] {
        guard let text else { return allLines }
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard names.allSatisfy(allLines.contains) else {
            throw BenchError("--lines takes a comma-separated list of \(allLines.joined(separator: ", ")), not \(text)")
        }
        return names
    }

    /// Prints `line` and flushes it, so each line shows as soon as it is measured when stdout is a file.
    static func say(_ line: String) {
        print(line)
        _ = fflush(nil)
    }

    static func option(_ name: String, in options: [String]) throws -> String? {
        guard let index = options.firstIndex(of: name) else { return nil }
        guard index + 1 < options.count else { throw BenchError("\(name) needs a value") }
        return options[index + 1]
    }

    static func mebibytes(_ text: String?, default value: Int) throws -> Int {
        guard let text else { return value }
        guard let parsed = Int(text), parsed > 0, parsed <= 65536 else {
            throw BenchError("a size takes a whole number of MiB (1...65536), not \(text)")
        }
        return parsed
    }

    static func seconds(_ value: Double) -> String { Measure.formatted(value, decimals: 2) + " s" }

    static func ratio(_ value: Double) -> String { Measure.formatted(value, decimals: 2) }

    static func mebibytesText(_ bytes: Int64) -> String {
        Measure.formatted(Double(bytes) / Double(1 << 20), decimals: 1) + " MiB"
    }

    // MARK: 1. S3 on loopback

    /// One client of the S3 line: its name and how it uploads `file` as `key`.
    struct S3Client {
        let name: String
        let upload: (_ key: String, _ name: String) async throws -> ClientFinish
    }

    static func s3Line(tools: E2ETools, sizeMiB: Int, runs: Int) async throws {
        let rgw: RGWProcess
        do {
            rgw = try RGWProcess(buckets: ["aether-bench"])
        } catch {
            say("e2e_s3: skipped: Ceph RGW does not start: \(error) (scripts/rgw.sh installs it as root)")
            return
        }
        defer { try? rgw.stop() }
        let file = tools.directory + "/s3.bin"
        try IOBench.makeRandomFile(file, size: sizeMiB << 20)
        defer { _ = unsafe unlink(file) }
        var clients = [
            S3Client(name: "aether") { key, name in
                try await tools.aetherToS3(
                    file: file, endpoint: rgw.endpoint, key: key, name: name, deadline: .infinity,
                    credentials: rgw.credentialsEnvironment, flavor: "ceph")
            },
            S3Client(name: "boto3") { key, name in
                try await tools.boto3(
                    file: file, endpoint: rgw.endpoint, key: key, name: name, deadline: .infinity,
                    credentials: rgw.credentialsEnvironment)
            },
        ]
        var skipped: [String] = []
        // Debian's awscli by its path: another `aws` may come first on PATH (a pyenv shim).
        let aws = "/usr/bin/aws"
        if unsafe access(aws, X_OK) == 0 {
            clients.append(
                S3Client(name: "aws") { key, name in
                    try await tools.awsCopy(
                        aws: aws, file: file, endpoint: rgw.endpoint, key: key, name: name,
                        credentials: rgw.credentialsEnvironment)
                })
        } else {
            skipped.append("aws s3 cp (Debian awscli is not installed)")
        }
        if let rclone = TransportBench.executable("rclone") {
            clients.append(
                S3Client(name: "rclone") { key, name in
                    try await tools.rcloneCopy(
                        rclone: rclone, file: file, endpoint: rgw.endpoint, key: key, name: name, rgw: rgw)
                })
        } else {
            skipped.append("rclone copyto (Debian rclone is not installed)")
        }
        var times = [String: [Double]]()
        for run in 0..<runs {
            // The order rotates, so no client always follows the same one (RGW's background work after a GiB).
            for step in 0..<clients.count {
                let client = clients[(run + step) % clients.count]
                let key = "\(client.name)-\(run)"
                let finish = try await client.upload(key, "s3-\(key)")
                times[client.name, default: []].append(finish.seconds)
                // Each object goes again at once, so the OSD's file holds one GiB at a time (RGW collects it).
                try await tools.deleteObject(rgw: rgw, bucket: "aether-bench", key: key)
            }
        }
        let label = Measure.sizeLabel(mebibytes: sizeMiB)
        let ours = times["aether"] ?? []
        let baselines = clients.dropFirst().map { ($0.name, times[$0.name] ?? []) }
        let fastest = baselines.map { IOBench.median($0.1) }.min() ?? 0
        func spread(_ values: [Double]) -> String {
            "[" + values.sorted().map { Measure.formatted($0, decimals: 2) }.joined(separator: " ") + "]"
        }
        say(
            Measure.pad("e2e_s3_\(label)_rgw", 28) + Measure.pad(seconds(IOBench.median(ours)), 12)
                + "time_ratio_vs_fastest=\(ratio(IOBench.median(ours) / max(fastest, 1e-9)))  (target <= 0.9) "
                + "runs \(spread(ours)); --s3-flavor ceph: RGW checked every part's signed SHA-256")
        let described = [
            "boto3": "boto3 upload_file", "aws": "aws s3 cp", "rclone": "rclone copyto",
        ]
        for (name, values) in baselines {
            say(
                Measure.pad("  \(described[name] ?? name)", 28) + Measure.pad(seconds(IOBench.median(values)), 12)
                    + "runs \(spread(values))  (same RGW on 127.0.0.1, median of \(runs), order rotated)")
        }
        for reason in skipped { say("  skipped: \(reason)") }
    }

    // MARK: 2. Steady bad link

    static func badLinkLine(tools: E2ETools, sizeMiB: Int) async throws {
        let lab = try LinkLab(rateMbit: 20, lossPercent: 3)
        defer { lab.tearDown() }
        let servers = try await tools.startLinkServers(lab: lab, prefix: "badlink")
        defer { servers.stop() }
        let file = tools.directory + "/link.bin"
        try IOBench.makeRandomFile(file, size: sizeMiB << 20)
        defer { _ = unsafe unlink(file) }

        var raw: [Double] = []
        var aether: [Double] = []
        var aetherResent: [Int64] = []
        for run in 0..<3 {
            raw.append(try await tools.rawStream(file: file, lab: lab, port: 9000 + run, name: "badlink-raw-\(run)"))
            let middle = try lab.payloadBytes()
            aether.append(
                try await tools.aetherToReceiver(
                    file: file, servers: servers, name: "badlink-aether-\(run)", deadline: .infinity
                ).seconds)
            let after = try lab.payloadBytes()
            aetherResent.append(after - middle - Int64(sizeMiB << 20))
        }
        let rawMedian = IOBench.median(raw)
        let oursMedian = IOBench.median(aether)
        var extra = ""
        let boto3 = try await tools.boto3(
            file: file, endpoint: servers.motoEndpoint, key: "badlink", name: "badlink-boto3", deadline: .infinity)
        extra += "  boto3=\(ratio(boto3.seconds / rawMedian))"
        let tuspy = try await tools.tuspy(
            file: file, url: servers.tusURL, name: "badlink-tuspy", deadline: .infinity)
        extra += "  tuspy=\(ratio(tuspy.seconds / rawMedian))"
        say(
            Measure.pad("e2e_badlink_\(Measure.sizeLabel(mebibytes: sizeMiB))", 28)
                + Measure.pad(seconds(oursMedian), 12)
                + "time_ratio_vs_raw_tcp=\(ratio(oursMedian / rawMedian))  (target <= 1.05)" + extra)
        say(
            Measure.pad("  raw TCP stream", 28) + Measure.pad(seconds(rawMedian), 12)
                + "(20 Mbit/s htb, 3% random loss, veth into a namespace; median of 3; boto3, tuspy: one run,"
                + " time / raw)")
        say(
            Measure.pad("  aether re-sent", 28)
                + aetherResent.map { mebibytesText($0) }.joined(separator: ", ")
                + "  (payload that crossed the link less the file)")
    }

    // MARK: 3. Mobile link

    static func mobileLine(tools: E2ETools, sizeMiB: Int, trace: LinkTrace) async throws {
        let lab = try LinkLab(rateMbit: trace.rate(at: 0), lossPercent: 1)
        defer { lab.tearDown() }
        let servers = try await tools.startLinkServers(lab: lab, prefix: "mobile")
        defer { servers.stop() }
        let file = tools.directory + "/mobile.bin"
        let size = sizeMiB << 20
        try IOBench.makeRandomFile(file, size: size)
        defer { _ = unsafe unlink(file) }
        let limit = trace.limit(bytes: Int64(size))

        struct Result {
            let name: String
            let finish: ClientFinish
            let payload: Int64
            let congestion: String
        }
        var results: [Result] = []
        var clients: [(String, (Double) async throws -> ClientFinish)] = [
            (
                "aether",
                { deadline in
                    try await tools.aetherToReceiver(
                        file: file, servers: servers, name: "mobile-aether", deadline: deadline)
                }
            ),
            (
                "boto3",
                { deadline in
                    try await tools.boto3(
                        file: file, endpoint: servers.motoEndpoint, key: "mobile", name: "mobile-boto3",
                        deadline: deadline)
                }
            ),
            (
                "tuspy",
                { deadline in
                    try await tools.tuspy(file: file, url: servers.tusURL, name: "mobile-tuspy", deadline: deadline)
                }
            ),
            (
                "aether_s3",
                { deadline in
                    try await tools.aetherToS3(
                        file: file, endpoint: servers.motoEndpoint, key: "mobile-aether", name: "mobile-aether-s3",
                        deadline: deadline)
                }
            ),
        ]
        if FileManager.default.isExecutableFile(atPath: E2ETools.awsCLI) {
            clients.append(
                (
                    "awscli",
                    { deadline in
                        try await tools.awsCLI(
                            file: file, endpoint: servers.motoEndpoint, key: "mobile-awscli", name: "mobile-awscli",
                            namespace: nil, deadline: deadline)
                    }
                ))
        }
        for (name, client) in clients {
            try lab.setResetting(false)
            try lab.setRate(trace.rate(at: 0))
            try await Task.sleep(nanoseconds: 1_000_000_000)  // the queue drains between clients
            let before = try lab.payloadBytes()
            let sampler = CongestionSampler(command: ["/usr/bin/ss", "-tin", "dst", lab.peerAddress])
            let start = Measure.now()
            let replay = Task { try await trace.replay(on: lab, from: start) }
            let finish: ClientFinish
            do {
                finish = try await client(start + 3 * limit)
            } catch {
                replay.cancel()
                _ = try? await replay.value
                _ = await sampler.finish()
                throw error
            }
            replay.cancel()
            _ = try? await replay.value
            try lab.setResetting(false)
            results.append(
                Result(
                    name: name, finish: finish, payload: try lab.payloadBytes() - before,
                    congestion: await sampler.finish()))
        }
        // A client that gave up did not deliver the file: it counts as stopped at 3x the limit.
        func counted(_ result: Result) -> Double {
            result.finish.failedStatus == nil ? result.finish.seconds : 3 * limit
        }
        func time(_ result: Result) -> String {
            if let status = result.finish.failedStatus {
                return
                    "gave up (exit \(status)) after \(seconds(result.finish.seconds)), counted as \(seconds(3 * limit))"
            }
            return result.finish.stopped
                ? "stopped at \(seconds(result.finish.seconds))" : seconds(result.finish.seconds)
        }
        func resent(_ result: Result) -> String {
            result.finish.stopped || result.finish.failedStatus != nil
                ? "sent \(mebibytesText(result.payload)) of \(mebibytesText(Int64(size)))"
                : "re-sent \(mebibytesText(result.payload - Int64(size)))"
        }
        let ours = results[0]
        let ratios = results.dropFirst().filter { !$0.name.hasPrefix("aether") }.map {
            "time_ratio_vs_\($0.name)=\(ratio(counted(ours) / counted($0)))"
        }
        say(
            Measure.pad("e2e_mobile_\(Measure.sizeLabel(mebibytes: sizeMiB))", 28)
                + Measure.pad(seconds(counted(ours)), 12)
                + ratios.joined(separator: "  ") + "  (target <= 0.8)")
        if let s3 = results.first(where: { $0.name == "aether_s3" }) {
            let baselines = results.filter { $0.name == "boto3" || $0.name == "awscli" }
            say(
                Measure.pad("e2e_mobile_\(Measure.sizeLabel(mebibytes: sizeMiB))_s3", 28)
                    + Measure.pad(seconds(counted(s3)), 12)
                    + baselines.map { "time_ratio_vs_\($0.name)=\(ratio(counted(s3) / counted($0)))" }
                    .joined(separator: "  "))
        }
        say(
            Measure.pad("  link limit", 28) + Measure.pad(seconds(limit), 12)
                + "(\(trace.name), mean \(Measure.formatted(trace.meanMbit, decimals: 1)) Mbit/s, 1% loss,"
                + " resets 1.5 s every 20 s; stopped at 3x)")
        for result in results {
            say(
                Measure.pad("  \(result.name)", 28) + time(result) + "  " + resent(result) + "  cc "
                    + result.congestion)
        }
    }
}
