import AetherIO
import AetherTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `aether-bench captures`: a folder of many small files (`--files N` of `--size-kib K`, default 2,000 of 4 KiB,
/// random bytes, in directories of 100, on /dev/shm) uploaded with `aether upload DIR DEST` (a child process, as
/// a user runs it) on loopback:
/// - into `aether serve` (a child, store on the same tmpfs): files per second, the client's peak RSS and CPU;
/// - into Ceph RGW (127.0.0.1) against Debian's `aws s3 sync` and `rclone copy` (default settings) of the same
///   folder, in the same run: files per second and the ratio to the faster of the two.
/// Every run is checked: `aether upload` exits 0 only after every file's receipt matched; the receiver's store
/// must hold one object per file plus the manifest; the S3 clients' objects are counted with a listing.
enum CaptureBench: BenchSuite {
    static let name = "captures"
    static let runsByDefault = false
    static let summary = "aether upload DIR (many small files) -> aether serve and RGW vs aws s3 sync, rclone copy"

    static func run(options: [String]) async throws {
        let count = try ReceiverUploadBench.integerOption(options, "--files", default: 2000, in: 1...1_000_000)
        let sizeKiB = try ReceiverUploadBench.integerOption(options, "--size-kib", default: 4, in: 1...65536)
        let parallel = try ReceiverUploadBench.integerOption(options, "--parallel-files", default: 16, in: 1...64)
        let aether = IOBaseline.executableDirectory() + "/aether"
        guard unsafe access(aether, X_OK) == 0 else {
            throw BenchError("\(aether) is missing: build it with `swift build -c release` (make release)")
        }
        let base = "/dev/shm/aether-bench-captures-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: base) }
        let folder = base + "/capture"
        try makeFolder(folder, count: count, size: sizeKiB << 10)
        let label = "\(count)x\(sizeKiB)KiB"
        print(
            "captures: \(count) files of \(sizeKiB) KiB on /dev/shm, --files \(parallel); load average \(IOBench.loadAverage())"
        )

        // Native, into aether serve.
        let server = try ReceiverChild(aether: aether, store: base + "/store")
        let before = try server.cpuSeconds()
        let native = IOBaseline.run([
            aether, "upload", folder, server.url + "/uploads", "--quiet", "--state-dir", try state(base, "native"),
            "--files", "\(parallel)",
        ])
        let serverCPU = try server.cpuSeconds() - before
        server.stop()
        guard native.status == 0 else { throw BenchError("aether upload DIR exited \(native.status)") }
        let stored = try FileManager.default.contentsOfDirectory(atPath: base + "/store/objects").count
        guard stored == count + 1 else { throw BenchError("the store holds \(stored) objects, not \(count + 1)") }
        Measure.line(
            "captures_native_loopback_\(label)",
            Measure.formatted(Double(count) / native.seconds, decimals: 0) + " files/s",
            ratios: [])
        print(
            "  \(Measure.formatted(native.seconds, decimals: 2)) s; client peak RSS \(native.peakResidentKiB / 1024) MiB, "
                + "client CPU \(Measure.formatted(native.cpuSeconds, decimals: 2)) s, receiver CPU "
                + "\(Measure.formatted(serverCPU, decimals: 2)) s")
        guard !options.contains("--no-baselines") else {
            print("captures: the RGW lines skipped (--no-baselines)")
            return
        }
        try await rgwLines(aether: aether, folder: folder, base: base, count: count, label: label, parallel: parallel)
    }

    /// The RGW lines: aether against `aws s3 sync` and `rclone copy`, each into a prefix of its own.
    static func rgwLines(aether: String, folder: String, base: String, count: Int, label: String, parallel: Int)
        async throws
    {
        let rgw: RGWProcess
        do {
            rgw = try RGWProcess(buckets: ["aether-bench"])
        } catch {
            print("captures_rgw: skipped: Ceph RGW does not start: \(error) (scripts/rgw.sh installs it as root)")
            return
        }
        defer { try? rgw.stop() }
        let credentials = rgw.credentialsEnvironment.map { "\($0.key)=\($0.value)" }.sorted()
        let environment = ["/usr/bin/env", "-u", "AWS_CA_BUNDLE"] + credentials
        var results: [(name: String, seconds: Double)] = []
        let ours = IOBaseline.run(
            environment + [
                aether, "upload", folder, "s3://aether-bench/aether/", "--endpoint", rgw.endpoint, "--s3-flavor",
                "ceph",
                "--quiet", "--state-dir", try state(base, "rgw"), "--files", "\(parallel)",
            ])
        guard ours.status == 0 else { throw BenchError("aether upload DIR s3:// exited \(ours.status)") }
        results.append(("aether", ours.seconds))
        let aws = "/usr/bin/aws"
        if unsafe access(aws, X_OK) == 0 {
            let run = IOBaseline.run(
                environment + [
                    aws, "--endpoint-url", rgw.endpoint, "s3", "sync", folder, "s3://aether-bench/aws/",
                    "--only-show-errors",
                ])
            guard run.status == 0 else { throw BenchError("aws s3 sync exited \(run.status)") }
            results.append(("aws s3 sync", run.seconds))
        } else {
            print("  skipped: aws s3 sync (Debian awscli is not installed)")
        }
        if let rclone = TransportBench.executable("rclone") {
            let run = IOBaseline.run(
                environment + [
                    rclone, "copy", folder, ":s3:aether-bench/rclone", "--s3-provider", "Ceph", "--s3-endpoint",
                    rgw.endpoint, "--s3-access-key-id", rgw.accessKeyID, "--s3-secret-access-key", rgw.secretAccessKey,
                    "--s3-region", rgw.region, "--config", "/dev/null",
                ])
            guard run.status == 0 else { throw BenchError("rclone copy exited \(run.status)") }
            results.append(("rclone copy", run.seconds))
        } else {
            print("  skipped: rclone copy (Debian rclone is not installed)")
        }
        let fastest = results.dropFirst().map(\.seconds).min()
        let ratio = fastest.map { [("files_per_second_vs_fastest", $0 / ours.seconds)] } ?? []
        Measure.line(
            "captures_rgw_loopback_\(label)", Measure.formatted(Double(count) / ours.seconds, decimals: 0) + " files/s",
            ratios: ratio)
        for (name, seconds) in results.dropFirst() {
            print(
                Measure.pad("  \(name)", 28) + Measure.formatted(Double(count) / seconds, decimals: 0) + " files/s  "
                    + "(\(Measure.formatted(seconds, decimals: 2)) s, same RGW on 127.0.0.1)")
        }
        print(
            "  aether: \(Measure.formatted(ours.seconds, decimals: 2)) s, peak RSS \(ours.peakResidentKiB / 1024) MiB; "
                + "--s3-flavor ceph: RGW checked every file's signed SHA-256")
    }

    /// `count` files of `size` random bytes under `folder`, 100 to a directory.
    static func makeFolder(_ folder: String, count: Int, size: Int) throws {
        var generator = SplitMix64(seed: 28)
        for index in 0..<count {
            let directory = folder + "/d\(index / 100)"
            if index % 100 == 0 {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            var bytes = [UInt8](repeating: 0, count: size)
            for offset in stride(from: 0, to: size, by: 8) {
                var word = generator.next()
                for byte in offset..<min(offset + 8, size) {
                    bytes[byte] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                }
            }
            guard FileManager.default.createFile(atPath: directory + "/f\(index).bin", contents: Data(bytes)) else {
                throw BenchError("could not write the capture's files under \(folder)")
            }
        }
    }

    /// A fresh private state directory.
    static func state(_ base: String, _ name: String) throws -> String {
        let path = base + "/state-" + name
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return path
    }
}
