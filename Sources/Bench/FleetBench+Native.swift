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

    /// One timed upload and the receiver's chunk time during it.
    struct NativeSample {
        var seconds: Double
        var chunk: ChunkTime
    }

    /// The `fleet_native` lines: 1 GiB (`--size-mib`) native upload into a fleet receiver (PostgreSQL + moto)
    /// against the embedded default (`--dir` on tmpfs), alternating, median of `--runs` each (default 1) after
    /// one warm-up each.
    static func nativeLines(
        _ postgres: PostgresProcess, catalogueSecondsPerChunk: (postgres: Double, sqlite: Double), options: [String]
    ) async throws {
        let sizeMiB = try ReceiverUploadBench.integerOption(options, "--size-mib", default: 1024, in: 1...16384)
        let runs = try ReceiverUploadBench.integerOption(options, "--runs", default: 1, in: 1...21)
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
        let moto: BenchChild
        let endpoint: String
        do {
            (moto, endpoint) = try await tools.startMoto(host: "127.0.0.1", port: 0, namespace: nil, name: "moto")
        } catch {
            print("fleet_native: skipped: moto does not start: \(error) (scripts/setup-venv.sh installs it)")
            return
        }
        defer { moto.stop() }
        let credentials = [
            "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1",
        ]
        let fleetServer = try BenchChild(
            [
                tools.aether, "serve", "--dir", base + "/fleet-store", "--port", "0", "--catalog",
                try postgres.createDatabase(), "--blobs", "s3://aether-bench/fleet", "--endpoint", endpoint,
            ], environment: credentials, logs: base + "/fleet-serve")
        defer { fleetServer.stop() }
        let embeddedServer = try BenchChild(
            [tools.aether, "serve", "--dir", base + "/store", "--port", "0"], logs: base + "/serve")
        defer { embeddedServer.stop() }
        let prefix = "listening on "
        let fleetURL = String(
            try await fleetServer.waitForLine(startingWith: prefix, timeout: 60, what: "aether serve (fleet)")
                .dropFirst(prefix.count))
        let embeddedURL = String(
            try await embeddedServer.waitForLine(startingWith: prefix, timeout: 60, what: "aether serve")
                .dropFirst(prefix.count))

        let size = sizeMiB << 20
        let source = base + "/body.bin"
        try IOBench.makeRandomFile(source, size: size)
        let label = Measure.sizeLabel(mebibytes: sizeMiB)
        print(
            "fleet: \(label) on /dev/shm, aether upload --protocol native (child) -> aether serve --catalog "
                + "postgres --blobs s3 (moto) vs aether serve --dir; load average \(IOBench.loadAverage())")
        var attempt = 0
        func upload(_ url: String) async throws -> NativeSample {
            // Dedup off: every run sends the same file, and each must send its bytes.
            attempt += 1
            let before = try await chunkTime(curl: curl, url: url, logs: base + "/metrics-\(attempt)a")
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
            let after = try await chunkTime(curl: curl, url: url, logs: base + "/metrics-\(attempt)b")
            return NativeSample(
                seconds: finish.seconds,
                chunk: ChunkTime(seconds: after.seconds - before.seconds, count: after.count - before.count))
        }
        _ = try await upload(fleetURL)
        _ = try await upload(embeddedURL)
        var fleet: [NativeSample] = []
        var embedded: [NativeSample] = []
        for _ in 0..<runs {
            fleet.append(try await upload(fleetURL))
            embedded.append(try await upload(embeddedURL))
            try? FileManager.default.removeItem(atPath: base + "/store/objects")
        }
        let fleetSeconds = IOBench.median(fleet.map(\.seconds))
        let embeddedSeconds = IOBench.median(embedded.map(\.seconds))
        Measure.line(
            "fleet_native_\(label)", Measure.rate(bytes: size, seconds: fleetSeconds),
            ratios: [("ratio_vs_embedded", embeddedSeconds / fleetSeconds)])
        print(
            Measure.pad("  embedded (--dir)", 28) + Measure.rate(bytes: size, seconds: embeddedSeconds)
                + "  (median of \(runs), alternating)")
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
