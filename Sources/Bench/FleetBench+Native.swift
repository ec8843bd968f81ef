import AetherIO
import AetherTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension FleetBench {
    /// The receiver's chunk-time histogram totals (`aether_chunk_seconds_sum` and `_count`).
    struct ChunkTime {
        var seconds: Double
        var count: Int
    }

    /// One timed upload: its wall time, the completing request's time in the receivers' logs, the CPU seconds
    /// each process spent during it, and the receivers' chunk time.
    struct NativeSample {
        var seconds: Double
        var completion: Double
        var cpu: [(name: String, seconds: Double)]
        var chunk: ChunkTime
    }

    /// A process whose CPU time is measured: its name and how to read its CPU seconds so far.
    struct Measured {
        let name: String
        let cpu: () -> Double
    }

    /// The `fleet_native` lines: 1 GiB (`--size-mib`) native upload through nginx (round robin, no buffering) into
    /// two fleet receivers (`aether serve --catalog postgres://... --blobs s3://...` on Ceph RGW, no `--dir`) against
    /// the embedded default (`--dir` on tmpfs), alternating, median of `--runs` each (default 3) after one warm-up
    /// each; the completion time (the `complete` request as the receiver logged it) and the CPU seconds of every
    /// process (the client, each receiver, nginx, PostgreSQL, ceph-mon, ceph-osd, radosgw).
    static func nativeLines(
        _ postgres: PostgresProcess, catalogueSecondsPerChunk: (postgres: Double, sqlite: Double), options: [String]
    ) async throws {
        let sizeMiB = try ReceiverUploadBench.integerOption(options, "--size-mib", default: 1024, in: 1...16384)
        let runs = try ReceiverUploadBench.integerOption(options, "--runs", default: 3, in: 1...21)
        let base = "/dev/shm/aether-bench-fleet-native-\(getpid())"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        guard let tools = try E2ETools(directory: base) else {
            print("fleet_native: skipped: the release aether or the Python venv is missing (see the line above)")
            return
        }
        guard let curl = TransportBench.executable("curl") else {
            print("fleet_native: skipped: curl is not installed (scripts/install-deps.sh installs it)")
            return
        }
        let help = try BenchChild([tools.aether, "serve", "--help"], logs: base + "/serve-help")
        guard (await help.finish(deadline: Measure.now() + 30)).output.contains("--blobs") else {
            print("fleet_native: skipped: this aether serve has no --blobs (the S3 blob store is not built in)")
            return
        }
        let rgw: RGWProcess
        do {
            rgw = try RGWProcess(buckets: ["aether-bench"])
        } catch {
            print("fleet_native: skipped: Ceph RGW does not start: \(error) (scripts/rgw.sh installs it as root)")
            return
        }
        defer { try? rgw.stop() }
        let catalogURL = try postgres.createDatabase()
        var fleetServers: [BenchChild] = []
        defer { fleetServers.forEach { $0.stop() } }
        var fleetURLs: [String] = []
        let prefix = "listening on "
        for index in 0..<2 {
            let server = try BenchChild(
                [
                    tools.aether, "serve", "--port", "0", "--catalog", catalogURL, "--blobs",
                    "s3://aether-bench/fleet", "--endpoint", rgw.endpoint,
                ], environment: rgw.credentialsEnvironment, logs: base + "/fleet-serve-\(index)")
            fleetServers.append(server)
            fleetURLs.append(
                String(
                    try await server.waitForLine(startingWith: prefix, timeout: 60, what: "aether serve (fleet)")
                        .dropFirst(prefix.count)))
        }
        let upstreams = fleetURLs.map { "server \($0.dropFirst("http://".count));" }.joined(separator: " ")
        let nginx = try NginxProcess(directory: base + "/nginx", seed: 31_000) { ports in
            """
            upstream fleet { \(upstreams) keepalive 32; }
            server {
                listen 127.0.0.1:\(ports[0]);
                client_max_body_size 0;
                proxy_request_buffering off;
                proxy_buffering off;
                location / {
                    proxy_pass http://fleet;
                    proxy_http_version 1.1;
                    proxy_set_header Connection "";
                    proxy_set_header Host $http_host;
                    proxy_read_timeout 600s;
                }
            }
            """
        }
        defer { nginx.stop() }
        let fleetURL = "http://127.0.0.1:\(nginx.port)"
        let embeddedServer = try BenchChild(
            [tools.aether, "serve", "--dir", base + "/store", "--port", "0"], logs: base + "/serve")
        defer { embeddedServer.stop() }
        let embeddedURL = String(
            try await embeddedServer.waitForLine(startingWith: prefix, timeout: 60, what: "aether serve")
                .dropFirst(prefix.count))

        let size = sizeMiB << 20
        let source = base + "/body.bin"
        try IOBench.makeRandomFile(source, size: size)
        let label = Measure.sizeLabel(mebibytes: sizeMiB)
        print(
            "fleet: \(label) on /dev/shm, aether upload --protocol native (child) -> nginx (round robin) -> 2 x "
                + "aether serve --catalog postgres --blobs s3 (Ceph RGW, no --dir) vs aether serve --dir; load "
                + "average \(IOBench.loadAverage())")
        func cpu(_ pid: Int32?) -> () -> Double { { pid.flatMap { ProcessCPU.seconds(processID: $0) } ?? 0 } }
        let postmaster = Self.postmasterPID(postgres)
        let fleetProcesses =
            fleetServers.enumerated().map { Measured(name: "receiver\($0.offset)", cpu: cpu($0.element.pid)) }
            + [
                Measured(name: "nginx", cpu: { nginx.cpuSeconds() ?? 0 }),
                Measured(name: "postgres", cpu: { postmaster.map(Self.treeCPU) ?? 0 }),
                Measured(name: "radosgw", cpu: cpu(rgw.processIDs["rgw"])),
                Measured(name: "ceph-osd", cpu: cpu(rgw.processIDs["osd"])),
                Measured(name: "ceph-mon", cpu: cpu(rgw.processIDs["mon"])),
            ]
        let embeddedProcesses = [Measured(name: "receiver", cpu: cpu(embeddedServer.pid))]
        var attempt = 0
        func upload(_ url: String, servers: [BenchChild], metrics: [String], measured: [Measured]) async throws
            -> NativeSample
        {
            // Dedup off: every run sends the same file, and each must send its bytes.
            attempt += 1
            var before = ChunkTime(seconds: 0, count: 0)
            for (index, metricsURL) in metrics.enumerated() {
                let time = try await chunkTime(curl: curl, url: metricsURL, logs: base + "/metrics-\(attempt)a\(index)")
                before.seconds += time.seconds
                before.count += time.count
            }
            let cpuBefore = measured.map { $0.cpu() }
            let childrenBefore = Self.childrenCPU()
            let completedBefore = servers.map { Self.completions($0.errors).count }
            let child = try BenchChild(
                [
                    tools.aether, "upload", source, url + "/uploads", "--protocol", "native", "--quiet",
                    "--state-dir", base + "/state-\(attempt)", "--flags", "-dedup",
                ], logs: base + "/upload-\(attempt)")
            let finish = await child.finish(deadline: .infinity)
            // `aether upload` exits 0 only after its own verification: Merkle root, chain head and the receipt.
            guard finish.status == 0 else {
                throw BenchError("aether upload exited \(finish.status): \(child.errorTail)")
            }
            let client = Self.childrenCPU() - childrenBefore
            let cpu = [("client", client)] + zip(measured, cpuBefore).map { ($0.name, $0.cpu() - $1) }
            var completion = 0.0
            for (server, count) in zip(servers, completedBefore) {
                completion += Self.completions(server.errors).dropFirst(count).reduce(0, +)
            }
            var after = ChunkTime(seconds: 0, count: 0)
            for (index, metricsURL) in metrics.enumerated() {
                let time = try await chunkTime(curl: curl, url: metricsURL, logs: base + "/metrics-\(attempt)b\(index)")
                after.seconds += time.seconds
                after.count += time.count
            }
            return NativeSample(
                seconds: finish.seconds, completion: completion, cpu: cpu,
                chunk: ChunkTime(seconds: after.seconds - before.seconds, count: after.count - before.count))
        }
        let fleetUpload = {
            try await upload(fleetURL, servers: fleetServers, metrics: fleetURLs, measured: fleetProcesses)
        }
        let embeddedUpload = {
            try await upload(
                embeddedURL, servers: [embeddedServer], metrics: [embeddedURL], measured: embeddedProcesses)
        }
        _ = try await fleetUpload()
        _ = try await embeddedUpload()
        var fleet: [NativeSample] = []
        var embedded: [NativeSample] = []
        for _ in 0..<runs {
            fleet.append(try await fleetUpload())
            embedded.append(try await embeddedUpload())
            // The objects go, their directory stays: the store renames each completed object into it (with the
            // directory gone, the next completion failed with 507).
            let objects = base + "/store/objects"
            for name in (try? FileManager.default.contentsOfDirectory(atPath: objects)) ?? [] {
                try? FileManager.default.removeItem(atPath: objects + "/" + name)
            }
        }
        let fleetSeconds = IOBench.median(fleet.map(\.seconds))
        let embeddedSeconds = IOBench.median(embedded.map(\.seconds))
        func spread(_ values: [Double]) -> String {
            "[" + values.sorted().map { Measure.formatted($0, decimals: 2) }.joined(separator: " ") + "]"
        }
        Measure.line(
            "fleet_native_\(label)", Measure.rate(bytes: size, seconds: fleetSeconds),
            ratios: [("ratio_vs_embedded", embeddedSeconds / fleetSeconds)])
        print(
            Measure.pad("  fleet runs (s)", 28) + spread(fleet.map(\.seconds))
                + "  (2 receivers over PostgreSQL + RGW behind nginx)")
        print(
            Measure.pad("  embedded (--dir)", 28) + Measure.rate(bytes: size, seconds: embeddedSeconds) + "  runs (s) "
                + spread(embedded.map(\.seconds)) + "  (median of \(runs), alternating)")
        print(
            Measure.pad("fleet_completion_s", 28)
                + Measure.pad("fleet=" + Measure.formatted(IOBench.median(fleet.map(\.completion)), decimals: 2), 18)
                + "embedded=\(Measure.formatted(IOBench.median(embedded.map(\.completion)), decimals: 2))  "
                + "(the complete request, from the receivers' logs; fleet runs \(spread(fleet.map(\.completion))))")
        func cpuLine(_ samples: [NativeSample]) -> String {
            guard let names = samples.first?.cpu.map(\.name) else { return "" }
            return names.enumerated().map { index, name in
                "\(name)=" + Measure.formatted(IOBench.median(samples.map { $0.cpu[index].seconds }), decimals: 1)
            }.joined(separator: " ")
        }
        print(Measure.pad("fleet_cpu_s", 28) + cpuLine(fleet) + "  (CPU seconds during one upload, median)")
        print(Measure.pad("  embedded cpu_s", 28) + cpuLine(embedded))
        // What RGW alone needs for the same bytes on this machine: the bound of the fleet's ratio.
        let floor = try await Self.s3Floor(rgw: rgw, bucket: "aether-bench", size: size)
        print(
            Measure.pad("fleet_s3_floor_s", 28)
                + Measure.pad("put=" + Measure.formatted(floor.put, decimals: 2), 18)
                + Measure.pad("compose=" + Measure.formatted(floor.compose, decimals: 2), 16)
                + "bound_ratio_vs_embedded="
                + Measure.formatted(embeddedSeconds / (floor.put + floor.compose), decimals: 2)
                + "  (RGW alone, no receiver: the bytes as 5 MiB PutObjects 8 at a time, then one object by "
                + "UploadPartCopy 16 at a time; radosgw+ceph-osd CPU \(Measure.formatted(floor.storeCPU, decimals: 1)) s)"
        )
        // Where the time goes, per acknowledged chunk request.
        let fleetChunk = perChunk(fleet)
        let embeddedChunk = perChunk(embedded)
        let catalogue = catalogueSecondsPerChunk.postgres
        let s3 = max(0, fleetChunk - embeddedChunk - (catalogue - catalogueSecondsPerChunk.sqlite))
        print(
            Measure.pad("fleet_chunk_ms", 28)
                + Measure.pad("fleet=" + Measure.formatted(fleetChunk * 1000, decimals: 2), 18)
                + "embedded=\(Measure.formatted(embeddedChunk * 1000, decimals: 2))  (receiver: headers to answer)")
        print(
            Measure.pad("fleet_chunk_split_ms", 28)
                + Measure.pad("catalogue=" + Measure.formatted(catalogue * 1000, decimals: 2), 18)
                + "s3=\(Measure.formatted(s3 * 1000, decimals: 2))  (s3: the fleet chunk time less the embedded one "
                + "and the catalogue difference)")
    }

    /// Median seconds per chunk request over `samples`.
    private static func perChunk(_ samples: [NativeSample]) -> Double {
        IOBench.median(samples.map { $0.chunk.count > 0 ? $0.chunk.seconds / Double($0.chunk.count) : 0 })
    }

    /// The seconds of each native `complete` request a receiver logged (`POST /uploads/ID/complete 200 ... Nms`).
    static func completions(_ log: String) -> [Double] {
        log.split(separator: "\n").compactMap { line -> Double? in
            guard line.contains("POST /uploads/"), line.contains("/complete 200 ") else { return nil }
            guard let word = line.split(separator: " ").first(where: { $0.hasSuffix("ms") }),
                let milliseconds = Double(word.dropLast(2))
            else { return nil }
            return milliseconds / 1000
        }
    }

    /// User + system CPU seconds of this process's children that have exited and been waited for.
    static func childrenCPU() -> Double {
        var usage = rusage()
        guard unsafe getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage) == 0 else { return 0 }
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// The postmaster's pid from `data/postmaster.pid`.
    static func postmasterPID(_ postgres: PostgresProcess) -> Int32? {
        guard let text = try? String(contentsOfFile: postgres.directory + "/data/postmaster.pid", encoding: .utf8)
        else { return nil }
        return text.split(separator: "\n").first.flatMap { Int32($0) }
    }

    /// CPU seconds of `root` and its live children (PostgreSQL's backends), from `/proc`.
    static func treeCPU(_ root: Int32) -> Double {
        var total = ProcessCPU.seconds(processID: root) ?? 0
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry), pid != root,
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, Int32(fields[1]) == root else { continue }
            total += ProcessCPU.seconds(processID: pid) ?? 0
        }
        return total
    }

    /// `GET /metrics` of the receiver at `url` (with curl): the chunk-time histogram's sum and count.
    static func chunkTime(curl: String, url: String, logs: String) async throws -> ChunkTime {
        let child = try BenchChild([curl, "-sS", "--fail", url + "/metrics"], logs: logs)
        let finish = await child.finish(deadline: Measure.now() + 30)
        guard finish.status == 0 else { throw BenchError("GET /metrics failed: \(child.errorTail)") }
        var time = ChunkTime(seconds: 0, count: 0)
        for line in finish.output.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count == 2 else { continue }
            if words[0] == "aether_chunk_seconds_sum", let value = Double(words[1]) { time.seconds = value }
            if words[0] == "aether_chunk_seconds_count", let value = Int(words[1]) { time.count = value }
        }
        return time
    }
}
