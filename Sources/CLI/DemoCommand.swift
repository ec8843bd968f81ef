import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// `aether demo`: the main job on the embedded default, end to end on this machine: a receiver on 127.0.0.1 with
/// a temporary store, a test file uploaded with the live progress bar, interrupted part way (as Ctrl-C does),
/// resumed by running the same command again, and the stored object verified chunk by chunk against the
/// file's manifest; then, briefly, an erasure-coded rebuild and a paired secure session. Every step runs the
/// real `aether` commands as child processes and stops the demo (exit 1) when one does not behave as shown.
enum DemoCommand: CLICommand {
    static let name = "demo"
    static let summary = "show the main job: serve, upload, interrupt, resume, verify (then erasure coding, a session)"
    static let usage = """
        usage: aether demo [--size N] [--max-rate N] [--work-dir D]
          --size N        the test file's size (K/M/G suffixes; default 256M, 16M ... 4G)
          --max-rate N    the upload's rate cap in bytes per second, so that it can be watched (default 64M)
          --work-dir D    keep the store, the file and the state in D (created; must not exist) instead of a
                          temporary directory removed at the end
        Runs in well under a minute with the defaults. Exit status 0 when every step behaved as shown, 1 when one
        did not (the message names it), 2 for a wrong command line.
        """

    static func run(_ arguments: [Word]) async throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["size", "max-rate", "work-dir"])
        let size = try parsed.integer("size", default: 256 << 20, in: (16 << 20)...(4 << 30))
        let rate = try parsed.integer("max-rate", default: 64 << 20, in: (1 << 20)...(1 << 40))
        let keep = parsed.option("work-dir")
        let work: String
        if let keep {
            try Syscall.mkdir(keep, mode: 0o700)
            work = keep
        } else {
            work = try DemoFiles.makeTemporaryDirectory(prefix: "aether-demo")
        }
        let demo = try Demo(work: work, size: size, rate: rate)
        defer { demo.tearDown(removing: keep == nil) }
        do {
            try await demo.run()
            return ExitStatus.success
        } catch let failure as Demo.Failure {
            StandardError.write("aether demo: \(failure.message)\n")
            return ExitStatus.failure
        }
    }
}

/// The demo's steps and the processes it started.
final class Demo {
    struct Failure: Error { let message: String }

    let work: String
    let size: Int
    let rate: Int
    let aether: String
    private var server: ChildProcess?

    init(work: String, size: Int, rate: Int) throws {
        self.work = work
        self.size = size
        self.rate = rate
        self.aether = try ChildProcess.ownExecutable()
    }

    func run() async throws {
        let url = try await startReceiver()
        let file = work + "/capture.bin"
        let manifest = work + "/capture.manifest.json"
        try await makeTestFile(file, manifest: manifest)
        try await uploadInterruptedAndResumed(file, to: url + "/uploads")
        try await verifyStoredObject(manifest: manifest)
        try await erasureCodedRebuild(file, manifest: manifest)
        try await pairedSession()
        step("done: upload, interruption, resume and verification; erasure-coded rebuild; paired secure session")
    }

    func tearDown(removing: Bool) {
        if let server {
            server.signal(SIGKILL)
            _ = waitpid(server.pid, nil, 0)
        }
        if removing, let remover = try? ChildProcess("/bin/rm", ["-rf", "--", work]) {
            _ = waitpid(remover.pid, nil, 0)
        }
    }

    // MARK: steps

    private func startReceiver() async throws -> String {
        step("1. A receiver on 127.0.0.1 with a temporary store: aether serve --dir \(work)/store --port 0")
        let out = work + "/serve.out"
        let server = try ChildProcess(
            aether, ["serve", "--dir", work + "/store", "--port", "0"], stdout: .file(out),
            stderr: .file(work + "/serve.log"))
        self.server = server
        for _ in 0..<200 {
            let text =
                (try? String(decoding: GuardedFile(path: out).readAll(maximumBytes: 1 << 16), as: UTF8.self)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) {
                let url = String(line.dropFirst("listening on ".count))
                StandardOutput.write("   \(text.split(separator: "\n").joined(separator: "\n   "))\n")
                return url
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Failure(message: "the receiver did not start within 10 s (see \(work)/serve.log)")
    }

    private func makeTestFile(_ file: String, manifest: String) async throws {
        step("2. A \(size >> 20) MiB test file of random bytes, and its manifest (per-chunk SHA-256, Merkle root)")
        let descriptor = try Syscall.open(file, flags: O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600)
        defer { Syscall.close(descriptor) }
        var written = 0
        while written < size {
            let piece = SecureRandom.bytes(min(4 << 20, size - written))
            try Syscall.writeFully(descriptor, piece, path: file)
            written += piece.count
        }
        try Syscall.fsync(descriptor, path: file)
        try await expect(
            0, ["digest", file, "--chunk-size", "4M", "--manifest", manifest], "digest failed", quiet: true)
        StandardOutput.write("   \(file)\n   \(manifest)\n")
    }

    private func uploadInterruptedAndResumed(_ file: String, to url: String) async throws {
        // -dedup: the file is new to the receiver, and digesting it first (for a content id) would delay the first
        // chunk past the interruption below, leaving nothing to resume.
        let command = [
            "upload", file, url, "--state-dir", work + "/state", "--max-rate", String(rate), "--chunk-size", "4M",
            "--flags", "-dedup",
        ]
        let seconds = Double(size) / Double(rate)
        step(
            "3. aether upload with the live progress bar (capped at \(rate >> 20) MiB/s so it can be watched); "
                + "interrupted part way, as Ctrl-C does")
        let first = try ChildProcess(aether, command)
        try await Task.sleep(for: .milliseconds(Int64(seconds * 450)))
        first.signal(SIGINT)
        let paused = await first.wait()
        guard paused == 3 else {
            throw Failure(message: "the interrupted upload exited \(paused), not 3 (paused)")
        }
        step("4. The same command again: it resumes from what the receiver acknowledged, and finishes")
        let second = try ChildProcess(aether, command)
        let finished = await second.wait()
        guard finished == 0 else { throw Failure(message: "the resumed upload exited \(finished), not 0") }
    }

    private func verifyStoredObject(manifest: String) async throws {
        step("5. The receiver's stored object, verified chunk by chunk against the file's manifest")
        let objects = try Syscall.directoryEntries(FilePath(work + "/store/objects"))
        guard objects.count == 1, let object = objects.first else {
            throw Failure(message: "the store holds \(objects.count) objects, not 1")
        }
        let path = work + "/store/objects/" + object.description
        StandardOutput.write("   \(path)\n")
        try await expect(0, ["verify", path, manifest], "the stored object does not verify")
    }

    private func erasureCodedRebuild(_ file: String, manifest: String) async throws {
        step("6. Erasure coding RS(10,4): four shards lost (two deleted, two damaged), the file rebuilt and verified")
        let shards = work + "/shards"
        try await expect(
            0, ["ec", "encode", "--data", "10", "--parity", "4", file, shards], "ec encode failed", quiet: true)
        try Syscall.unlink(shards + "/shard-00002.bin")
        try Syscall.unlink(shards + "/shard-00011.bin")
        for (name, offset) in [("shard-00005.bin", 1000), ("shard-00007.bin", 9)] {
            try DemoFiles.overwrite(shards + "/" + name, with: Array("damage".utf8), at: Int64(offset))
        }
        StandardOutput.write("   shards 2 and 11 deleted, 5 and 7 damaged\n")
        try await expect(0, ["ec", "decode", shards, work + "/rebuilt.bin"], "ec decode failed", quiet: true)
        try await expect(0, ["verify", work + "/rebuilt.bin", manifest], "the rebuilt file does not verify")
    }

    private func pairedSession() async throws {
        step("7. A device paired with a host; a secure session (Noise NNpsk0 over UDP) on loopback")
        let state = work + "/session"
        try await expect(
            0, ["session", "pair", "--host-id", "00112233445566778899aabbccddeeff", "--state-dir", state],
            "pairing failed", quiet: true)
        let port = try ChildProcess.freeUDPPort()
        let host = try ChildProcess(
            aether, ["session", "host", "--bind", "127.0.0.1", "--port", String(port), "--echo", "--state-dir", state],
            stdout: .file(work + "/host.out"), stderr: .file(work + "/host.err"))
        defer {
            host.signal(SIGTERM)
            _ = waitpid(host.pid, nil, 0)
        }
        try await Task.sleep(for: .milliseconds(500))
        let input = work + "/records.txt"
        do {
            let descriptor = try Syscall.open(input, flags: O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600)
            defer { Syscall.close(descriptor) }
            try Syscall.writeFully(descriptor, Array("first sealed record\nsecond sealed record\n".utf8), path: input)
        }
        try await expect(
            0, ["session", "connect", "127.0.0.1:\(port)", "--state-dir", state, "--counts"], "the session failed",
            stdin: input)
    }

    // MARK: helpers

    private func expect(
        _ status: Int32, _ arguments: [String], _ message: String, quiet: Bool = false, stdin: String = "/dev/null"
    ) async throws {
        let log = work + "/last-command.out"
        let child = try ChildProcess(
            aether, arguments, stdin: .file(stdin), stdout: quiet ? .file(log) : .inherit, stderr: .inherit)
        let got = await child.wait()
        guard got == status else {
            throw Failure(message: "\(message): aether \(arguments.joined(separator: " ")) exited \(got)")
        }
    }

    private func step(_ text: String) {
        StandardOutput.write("\n== \(text)\n")
    }
}
