import AetherIO
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The file commands as a hostile user drives them: outputs that are inputs, FIFOs, edited indexes,
/// names that are not UTF-8, too few file descriptors, a kill in the middle. Each gives a clear error
/// (or correct output) and loses nothing.
@Suite struct FileSafetyLiveTests {
    /// Runs `script` with /bin/sh in `directory`, `$AETHER` naming the binary; kills it after `timeout`.
    static func shell(_ script: String, in directory: String, timeout: Double = 30) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var environment = ProcessInfo.processInfo.environment
        environment["AETHER"] = SessionLive.aetherPath
        process.environment = environment
        let out = directory + "/.stdout", err = directory + "/.stderr"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: out)
        process.standardError = FileHandle(forWritingAtPath: err)
        try process.run()
        try SessionLive.wait("sh -c \(script.prefix(60))", timeout: timeout) { !process.isRunning }
        process.waitUntilExit()
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: err)
        }
        return (
            process.terminationStatus, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
            (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        )
    }

    static func randomFile(_ path: String, size: Int) throws {
        try Data(SecureRandom.bytes(size)).write(to: URL(fileURLWithPath: path))
    }

    static func contents(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    static func snapshot(_ directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            files[name] = try contents(directory + "/" + name)
        }
        return files
    }

    /// Hidden staging or backup directories an encode left beside its target.
    static func staging(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.contains(".aether-new-") || $0.contains(".aether-old-") || ($0.hasPrefix(".") && $0.hasSuffix(".tmp"))
        }
    }

    @Test func digestRefusesAManifestPathThatIsItsInputOrALinkToIt() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/data.bin"
        try Self.randomFile(file, size: 100_000)
        let original = try Self.contents(file)
        #expect(unsafe link(file, directory + "/hard") == 0)
        #expect(unsafe symlink(file, directory + "/soft") == 0)
        for output in [file, directory + "/hard", directory + "/soft"] {
            let (status, _, error) = try SessionLive.runAether(["digest", file, "--manifest", output])
            #expect(status == 1, "\(output): \(error)")
            #expect(error.contains("outputIsInput"))
            #expect(try Self.contents(file) == original)
        }
    }

    @Test func ecRefusesOutputsThatAreItsInputs() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/data.bin"
        let shards = directory + "/shards"
        try Self.randomFile(file, size: 50_000)
        #expect(try SessionLive.runAether(["ec", "encode", "--data", "3", "--parity", "2", file, shards]).0 == 0)
        let before = try Self.snapshot(shards)
        let attempts: [[String]] = [
            ["ec", "decode", shards, shards + "/index.json"],
            ["ec", "decode", shards, shards + "/shard-00000.bin"],
            ["ec", "decode", shards, shards + "/rebuilt.bin"],
            ["ec", "encode", "--data", "2", "--parity", "1", shards + "/shard-00000.bin", shards],
            ["ec", "encode", "--data", "2", "--parity", "1", shards + "/index.json", shards],
        ]
        for attempt in attempts {
            let (status, _, error) = try SessionLive.runAether(attempt)
            #expect(status == 1, "\(attempt): \(error)")
            #expect(error.contains("outputIsInput"), "\(attempt): \(error)")
            #expect(try Self.snapshot(shards) == before)
        }
    }

    @Test func fifosAsInputManifestIndexShardOrCertificateAreErrorsNotHangs() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/data.bin"
        let fifo = directory + "/fifo"
        let shards = directory + "/shards"
        try Self.randomFile(file, size: 20_000)
        #expect(unsafe mkfifo(fifo, 0o600) == 0)
        #expect(try SessionLive.runAether(["ec", "encode", "--data", "2", "--parity", "1", file, shards]).0 == 0)
        // runAether gives up after 20 s: a command blocked opening a FIFO without a writer fails the test.
        for arguments in [
            ["digest", fifo], ["verify", fifo, file], ["verify", file, fifo],
            ["ec", "encode", "--data", "2", "--parity", "1", fifo, directory + "/other"], ["pin", fifo],
        ] {
            let (status, _, error) = try SessionLive.runAether(arguments)
            #expect(status == 1, "\(arguments): \(error)")
            #expect(error.contains("notARegularFile"), "\(arguments): \(error)")
        }
        for victim in [shards + "/index.json", shards + "/shard-00001.bin"] {
            try FileManager.default.removeItem(atPath: victim)
            #expect(unsafe mkfifo(victim, 0o600) == 0)
            let (status, _, error) = try SessionLive.runAether(["ec", "decode", shards, directory + "/out"])
            #expect(status == 1 && error.contains("notARegularFile"), "\(victim): \(error)")
        }
    }

    @Test func decodeRefusesAnEditedIndexInsteadOfWritingAWrongFile() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/data.bin"
        let shards = directory + "/shards"
        try Self.randomFile(file, size: 10_000)
        #expect(try SessionLive.runAether(["ec", "encode", "--data", "4", "--parity", "2", file, shards]).0 == 0)
        let index = shards + "/index.json"
        let text = String(decoding: try Self.contents(index), as: UTF8.self)
        // Same shard size (2500 bytes), so every shard still matches its digest.
        try Data(text.replacingOccurrences(of: "\"fileSize\":10000", with: "\"fileSize\":9999").utf8)
            .write(to: URL(fileURLWithPath: index))
        let (status, _, error) = try SessionLive.runAether(["ec", "decode", shards, directory + "/out"])
        #expect(status == 1)
        #expect(error.contains("verificationFailed"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/out"))
    }

    @Test func namesThatAreNotUTF8AreReadAndWrittenByTheirBytes() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // 0xFF and 0xFE both become U+FFFD in a String: with lossy paths, the commands would read or
        // write a file named with U+FFFD (EF BF BD) instead of these.
        let script = """
            set -e
            a=$(printf 'in-\\377'); b=$(printf 'in-\\376'); m=$(printf 'm-\\377.json')
            s=$(printf 'shards-\\351'); o=$(printf 'out-\\377')
            head -c 70000 /dev/urandom > "$a"; printf 'other' > "$b"
            "$AETHER" digest "$a" --chunk-size 4K --manifest "$m"
            "$AETHER" verify "$a" "$m"
            "$AETHER" ec encode --data 3 --parity 1 "$a" "$s"
            "$AETHER" ec decode "$s" "$o"
            cmp "$a" "$o"
            test "$(cat "$b")" = other
            if ls -a | LC_ALL=C grep -q "$(printf '\\357\\277\\275')"; then echo "a name was repaired"; exit 9; fi
            """
        let (status, output, error) = try Self.shell(script, in: directory)
        #expect(status == 0, "\(output) \(error)")
        #expect(output.contains("in-\\xFF"))
        #expect(output.contains("intact: 18 chunks"))
    }

    /// Under a limit too low for its store and a few connections the receiver refuses to start and says to raise
    /// it. 13 ended the process with SIGILL before: libdispatch's worker monitor could not open /proc and crashed.
    @Test(arguments: [8, 13, 79])
    func aReceiverWithTooFewFileDescriptorsSaysToRaiseTheLimit(limit: Int) throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (status, _, error) = try Self.shell(
            "ulimit -n \(limit); exec \"$AETHER\" serve --dir store --port 0", in: directory)
        #expect(status == 1, "\(error)")
        #expect(error.contains("the open-file limit is \(limit)"), "\(error)")
        #expect(error.contains("raise the open-file limit (ulimit -n)"), "\(error)")
        #expect(!error.contains("Signal"))
    }

    /// 150 connections held open against a receiver allowed 100 descriptors: it takes no more connections than
    /// leave its reserve (ReceiverServer.reservedDescriptors, 64) free (the old limit of 1024 let them take every
    /// descriptor), stays up, and answers once they are gone.
    @Test func aConnectionFloodLeavesTheReceiverItsReserveOfDescriptors() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = """
            (ulimit -n 100; exec "$AETHER" serve --dir store --port 0 > serve.out 2>&1) &
            pid=$!
            for i in $(seq 100); do grep -q "listening on" serve.out && break; sleep 0.1; done
            port=$(sed -n 's/^listening on http:\\/\\/127.0.0.1://p' serve.out)
            python3 - "$port" "$pid" <<'PY'
            import socket, sys, time, os, urllib.request
            port, pid = int(sys.argv[1]), sys.argv[2]
            held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(150)]
            time.sleep(2)
            print("fds=%d" % len(os.listdir("/proc/%s/fd" % pid)))
            for s in held: s.close()
            time.sleep(1)
            print("healthz=%d" % urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=10).status)
            PY
            kill -TERM $pid; wait $pid; echo "serve=$?"
            """
        let (status, output, error) = try Self.shell(script, in: directory, timeout: 60)
        #expect(status == 0, "\(output) \(error)")
        let fds = output.split(separator: "\n").first { $0.hasPrefix("fds=") }.flatMap { Int($0.dropFirst(4)) }
        let count = try #require(fds, "\(output) \(error)")
        #expect(count <= 100 - 64 + 16, "\(count) descriptors in use")
        #expect(output.contains("healthz=200"), "\(output) \(error)")
        #expect(output.contains("serve=0"), "\(output) \(error)")
    }

    /// A file where the store directory belongs, and a catalogue that is not a database: each is named with the
    /// step to take, and left as it is.
    @Test(arguments: [
        ("store", "give --dir a directory"),
        ("store/catalog.sqlite3", "the catalogue (catalog.sqlite3 in --dir) is damaged: restore it from a backup"),
    ])
    func aDamagedStoreIsNamedAndKeptAsItIs(damaged: String, step: String) throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if damaged.contains("/") {
            try FileManager.default.createDirectory(atPath: directory + "/store", withIntermediateDirectories: false)
        }
        try Self.randomFile(directory + "/" + damaged, size: 8192)
        let before = try Self.contents(directory + "/" + damaged)
        let (status, _, error) = try Self.shell("exec \"$AETHER\" serve --dir store --port 0", in: directory)
        #expect(status == 1, "\(error)")
        #expect(error.contains(step), "\(error)")
        #expect(try Self.contents(directory + "/" + damaged) == before)
    }

    @Test func tooFewFileDescriptorsFailTheEncodingAndLeaveTheEarlierSetWhole() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (first, second) = (directory + "/first.bin", directory + "/second.bin")
        try Self.randomFile(first, size: 120_000)
        try Self.randomFile(second, size: 90_000)
        #expect(
            try SessionLive.runAether(
                ["ec", "encode", "--data", "8", "--parity", "4", first, "shards"]
                    .map { $0 == "shards" ? directory + "/shards" : $0 }
            ).0 == 0)
        let before = try Self.snapshot(directory + "/shards")
        let (status, _, error) = try Self.shell(
            "ulimit -n 12; exec \"$AETHER\" ec encode --data 8 --parity 4 second.bin shards", in: directory)
        #expect(status == 1, "\(error)")
        #expect(error.contains("ulimit -n"))
        #expect(try Self.snapshot(directory + "/shards") == before)
        #expect(try Self.staging(in: directory).isEmpty)
        let (decoded, _, decodeError) = try SessionLive.runAether([
            "ec", "decode", directory + "/shards", directory + "/out",
        ])
        #expect(decoded == 0, "\(decodeError)")
        #expect(try Self.contents(directory + "/out") == Self.contents(first))
    }

    @Test func aKilledEncodingLeavesTheOldSetOrTheNewOneNeverAMix() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (first, second, shards) = (directory + "/first.bin", directory + "/second.bin", directory + "/shards")
        try Self.randomFile(first, size: 100_000)
        try Self.randomFile(second, size: 48 << 20)
        #expect(try SessionLive.runAether(["ec", "encode", "--data", "4", "--parity", "2", first, shards]).0 == 0)
        let process = try AetherProcess(["ec", "encode", "--data", "6", "--parity", "3", second, shards])
        // Kill -9 as soon as the new set is being written beside the old one.
        try SessionLive.wait("the staging directory", timeout: 20) {
            try !Self.staging(in: directory).isEmpty || !process.process.isRunning
        }
        kill(process.process.processIdentifier, SIGKILL)
        process.stop()
        let (status, _, error) = try SessionLive.runAether(["ec", "decode", shards, directory + "/out"])
        #expect(status == 0, "\(error)")
        let rebuilt = try Self.contents(directory + "/out")
        #expect(try rebuilt == Self.contents(first) || rebuilt == Self.contents(second))
    }

    @Test func verifyRefusesAManifestLargerThanAnyManifestOfTheFile() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/small.bin"
        try Self.randomFile(file, size: 1000)
        let manifest = directory + "/huge.json"
        try Data(repeating: 0x20, count: 8 << 20).write(to: URL(fileURLWithPath: manifest))
        let (status, _, error) = try SessionLive.runAether(["verify", file, manifest])
        #expect(status == 1)
        #expect(error.contains("larger than any manifest"))
    }

    @Test func decodedFilesHonourTheUmaskAndKeepAnExistingMode() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.randomFile(directory + "/data.bin", size: 5000)
        try Data([1]).write(to: URL(fileURLWithPath: directory + "/kept.bin"))
        #expect(unsafe chmod(directory + "/kept.bin", 0o604) == 0)
        let script = """
            set -e
            "$AETHER" ec encode --data 2 --parity 1 data.bin shards
            umask 027; "$AETHER" ec decode shards new.bin; "$AETHER" ec decode shards kept.bin
            stat -c %a new.bin kept.bin
            """
        let (status, output, error) = try Self.shell(script, in: directory)
        #expect(status == 0, "\(error)")
        #expect(output.hasSuffix("640\n604\n"))
        #expect(try Self.contents(directory + "/kept.bin") == Self.contents(directory + "/data.bin"))
    }
}
