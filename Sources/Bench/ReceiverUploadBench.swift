import AetherIO
import AetherTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `aether-bench receiver`: a 1 GiB file on tmpfs (`/dev/shm`) uploaded with `aether upload --protocol native` (a
/// child process: ChunkedUploader + NativeBackend, as a user runs it) into `aether serve` (a child process, store on
/// the same tmpfs), against `curl -T` of the same file into nginx's WebDAV `PUT` (Debian nginx, root on the same
/// tmpfs), alternating in the same run, median of `--runs` each (default 3) after one warm-up each.
/// Both uploads are checked after each run: the receiver's object and nginx's file must equal the source
/// (SHA-256), and `aether upload` exits 0 only after its own verification (Merkle root, chain head, receipt).
/// CPU: the receiver's and nginx's (user + system, from /proc/PID/stat around each upload), the client's from
/// wait4. The same measurement is issue 17's loopback end-to-end line (`e2e_loopback_1GiB`).
/// Then the bound: from curl's and nginx's CPU and one SHA-256 pass's, the most an upload hashing every byte twice
/// (once a side) or four times (Aether: a chunk and a whole-file pass a side) could reach on this machine's cores.
enum ReceiverUploadBench: BenchSuite {
    static let name = "receiver"
    static let runsByDefault = false
    static let summary = "aether upload -> aether serve (native, 1 GiB, tmpfs) vs curl -T into nginx WebDAV PUT"

    struct Sample {
        var seconds: Double
        var serverCPU: Double
        var clientCPU: Double
    }

    static func run(options: [String]) async throws {
        let sizeMiB = try integerOption(options, "--size-mib", default: 1024, in: 1...16384)
        let runs = try integerOption(options, "--runs", default: 3, in: 1...21)
        var extra: [String] = []
        for name in ["--chunk-size", "--parallel"] {
            if let index = options.firstIndex(of: name), index + 1 < options.count {
                extra += [name, options[index + 1]]
            }
        }
        guard NginxProcess.executable != nil, let curl = TransportBench.executable("curl") else {
            print("receiver: skipped: nginx or curl is not installed (scripts/install-deps.sh installs them)")
            return
        }
        let aether = IOBaseline.executableDirectory() + "/aether"
        guard unsafe access(aether, X_OK) == 0 else {
            throw BenchError("\(aether) is missing: build it with `swift build -c release` (make release)")
        }
        // Another build's `aether` (client and receiver both), measured in the same run, alternating.
        let compared = try E2EBench.option("--compare-aether", in: options)
        try E2ELabOptions.comparedBuild(compared)
        let base = "/dev/shm/aether-bench-receiver-\(getpid())"
        try FileManager.default.createDirectory(atPath: base + "/webdav", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let size = sizeMiB << 20
        let source = base + "/body.bin"
        try IOBench.makeRandomFile(source, size: size)
        let sourceDigest = try FileDigester.digest(path: source).file.sha256

        let server = try ReceiverChild(aether: aether, store: base + "/store")
        defer { server.stop() }
        let comparedServer = try compared.map { try ReceiverChild(aether: $0, store: base + "/store-compared") }
        defer { comparedServer?.stop() }
        let nginx = try NginxProcess(directory: base + "/nginx", seed: 24_000) { ports in
            """
                client_max_body_size 0;
                server {
                    listen 127.0.0.1:\(ports[0]);
                    root \(base)/webdav;
                    location / { dav_methods PUT; }
                }
            """
        }
        defer { nginx.stop() }
        let label = Measure.sizeLabel(mebibytes: sizeMiB)
        print(
            "receiver: \(label) on /dev/shm, aether upload --protocol native \(extra.map { $0 + " " }.joined())"
                + "(child) -> aether serve (child); load average \(IOBench.loadAverage())")

        var attempt = 0
        func upload(_ binary: String, into server: ReceiverChild, store: String) throws -> Sample {
            attempt += 1
            let before = try server.cpuSeconds()
            let run = IOBaseline.run(
                [
                    binary, "upload", source, server.url + "/uploads", "--protocol", "native", "--quiet",
                    "--state-dir", base + "/state-\(attempt)",
                ] + extra)
            let serverCPU = try server.cpuSeconds() - before
            guard run.status == 0 else { throw BenchError("\(binary) upload exited \(run.status)") }
            let objects = try FileManager.default.contentsOfDirectory(atPath: store + "/objects")
            guard objects.count == 1 else { throw BenchError("the store holds \(objects.count) objects, not 1") }
            let stored = store + "/objects/" + objects[0]
            guard try FileDigester.digest(path: stored).file.sha256 == sourceDigest else {
                throw BenchError("the receiver's object differs from the source")
            }
            try FileManager.default.removeItem(atPath: stored)
            try? FileManager.default.removeItem(atPath: base + "/state-\(attempt)")
            return Sample(seconds: run.seconds, serverCPU: serverCPU, clientCPU: run.cpuSeconds)
        }
        func ours() throws -> Sample { try upload(aether, into: server, store: base + "/store") }
        func other() throws -> Sample? {
            guard let compared, let comparedServer else { return nil }
            return try upload(compared, into: comparedServer, store: base + "/store-compared")
        }
        func baseline() throws -> Sample {
            attempt += 1
            let target = "\(base)/webdav/put-\(attempt).bin"
            let before = try nginxCPU(nginx)
            let run = IOBaseline.run([
                curl, "-sS", "--fail", "-o", "/dev/null", "-T", source,
                "http://127.0.0.1:\(nginx.port)/put-\(attempt).bin",
            ])
            let serverCPU = try nginxCPU(nginx) - before
            guard run.status == 0 else { throw BenchError("curl -T exited \(run.status)") }
            guard try FileDigester.digest(path: target).file.sha256 == sourceDigest else {
                throw BenchError("nginx's file differs from the source")
            }
            try FileManager.default.removeItem(atPath: target)
            return Sample(seconds: run.seconds, serverCPU: serverCPU, clientCPU: run.cpuSeconds)
        }
        _ = try ours()
        _ = try other()
        _ = try baseline()
        var oursSamples: [Sample] = []
        var comparedSamples: [Sample] = []
        var baselineSamples: [Sample] = []
        for _ in 0..<runs {
            oursSamples.append(try ours())
            if let sample = try other() { comparedSamples.append(sample) }
            baselineSamples.append(try baseline())
        }
        let gib = Double(size) / Double(1 << 30)
        let oursSeconds = IOBench.median(oursSamples.map(\.seconds))
        let nginxSeconds = IOBench.median(baselineSamples.map(\.seconds))
        let ratio = [("ratio_vs_nginx_webdav", nginxSeconds / oursSeconds)]
        Measure.line("receiver_native_\(label)", Measure.rate(bytes: size, seconds: oursSeconds), ratios: ratio)
        print(
            Measure.pad("  nginx WebDAV PUT, curl -T", 28) + Measure.rate(bytes: size, seconds: nginxSeconds)
                + "  (median of \(runs), alternating)")
        let receiverCPU = IOBench.median(oursSamples.map(\.serverCPU)) / gib
        let nginxWorkerCPU = IOBench.median(baselineSamples.map(\.serverCPU)) / gib
        print(
            Measure.pad("receiver_cpu", 28) + Measure.pad(Measure.formatted(receiverCPU, decimals: 2) + " s/GiB", 14)
                + "nginx_worker_cpu=\(Measure.formatted(nginxWorkerCPU, decimals: 2)) s/GiB")
        let clientCPU = IOBench.median(oursSamples.map(\.clientCPU)) / gib
        let curlCPU = IOBench.median(baselineSamples.map(\.clientCPU)) / gib
        print(
            Measure.pad("client_cpu", 28) + Measure.pad(Measure.formatted(clientCPU, decimals: 2) + " s/GiB", 14)
                + "curl_cpu=\(Measure.formatted(curlCPU, decimals: 2)) s/GiB")
        Measure.line("e2e_loopback_\(label)", Measure.rate(bytes: size, seconds: oursSeconds), ratios: ratio)
        print("  (e2e_loopback: the same measurement as receiver_native_\(label), issue 17's loopback line)")
        if let compared, !comparedSamples.isEmpty {
            let comparedSeconds = IOBench.median(comparedSamples.map(\.seconds))
            Measure.line(
                "receiver_native_compared_\(label)", Measure.rate(bytes: size, seconds: comparedSeconds),
                ratios: [("this_build_vs_compared", comparedSeconds / oursSeconds)])
            print(
                Measure.pad("  compared build's CPU", 28)
                    + "receiver \(Measure.formatted(IOBench.median(comparedSamples.map(\.serverCPU)) / gib, decimals: 2))"
                    + " s/GiB, client \(Measure.formatted(IOBench.median(comparedSamples.map(\.clientCPU)) / gib, decimals: 2))"
                    + " s/GiB (\(compared), median of \(runs), alternating; above 1 this build is faster)")
        }

        // The bound: the most any upload that hashes every byte `passes` times could reach on this machine, if its
        // copies cost no more CPU than curl's and nginx's (with libcurl and libmicrohttpd moving the bytes they cannot
        // cost less: the same read, send, receive and write) and its work spread over every core with no wait at
        // all. Time >= (curl CPU + nginx CPU + passes x one SHA-256 pass's CPU) / cores, all measured in this run.
        let chunks = try IOBench.loadChunks(source)
        var passSamples: [Double] = []
        for _ in 0..<runs {
            let start = Measure.now()
            guard try Digest32(bytes: OpenSSLBaseline.sha256Pass(chunks)) == sourceDigest else {
                throw BenchError("the SHA-256 pass does not give the file's digest")
            }
            passSamples.append(Measure.now() - start)
        }
        let passSeconds = IOBench.median(passSamples)
        let copyCPU = (nginxWorkerCPU + curlCPU) * gib
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        for passes in [2, 4] {
            let boundSeconds = (copyCPU + Double(passes) * passSeconds) / cores
            Measure.line(
                "bound_\(passes)_passes_\(label)", Measure.rate(bytes: size, seconds: boundSeconds),
                ratios: [("ratio_vs_nginx_webdav", nginxSeconds / boundSeconds)])
        }
        print(
            "  (bound: (curl CPU + nginx CPU + passes x one SHA-256 pass, \(Measure.formatted(passSeconds, decimals: 2)) s)"
                + " / \(Int(cores)) cores; 2 passes is one a side, the least an upload verified on both sides"
                + " computes; 4 is Aether's, a chunk and a whole-file pass a side)")
    }

    static func nginxCPU(_ nginx: NginxProcess) throws -> Double {
        guard let seconds = nginx.cpuSeconds() else { throw BenchError("nginx exited (see its error.log)") }
        return seconds
    }

    static func integerOption(_ options: [String], _ name: String, default value: Int, in range: ClosedRange<Int>)
        throws -> Int
    {
        guard let index = options.firstIndex(of: name) else { return value }
        guard index + 1 < options.count, let parsed = Int(options[index + 1]), range.contains(parsed) else {
            throw BenchError("\(name) takes a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return parsed
    }
}

/// `aether serve --dir STORE --port 0` as a child process, up once it prints `listening on URL`.
final class ReceiverChild {
    let url: String
    private let process: Process

    init(aether: String, store: String) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: aether)
        process.arguments = ["serve", "--dir", store, "--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("listening on ") || !text.hasSuffix("\n") {
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else { throw BenchError("aether serve exited before listening: \(text)") }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) else {
            throw BenchError("aether serve said: \(text)")
        }
        url = String(line.dropFirst("listening on ".count))
    }

    func cpuSeconds() throws -> Double {
        guard let seconds = ProcessCPU.seconds(processID: process.processIdentifier) else {
            throw BenchError("aether serve exited")
        }
        return seconds
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}
