import AetherIO
import Foundation
import Testing

/// Crash torture of the `aether upload` client (issue 17): the same command is killed with SIGKILL at 20 seeded
/// points of one large upload to `aether serve` and run again each time. The final object is byte-identical, no
/// acknowledged part is lost or acknowledged twice, and what a killed run sent that the receiver did not keep
/// (and the next run sends again) is at most the parts that were in flight.
///
/// `make test` uploads 128 MiB; `AETHER_TORTURE=1` (`make torture`) uploads 1 GiB.
@Suite(.serialized) struct ClientCrashTortureTests {
    static var torture: Bool { ProcessInfo.processInfo.environment["AETHER_TORTURE"] == "1" }

    /// Writes `megabytes` MiB of seeded content: one seeded MiB, each copy stamped with its index in its first
    /// eight bytes, so no two parts are equal.
    static func writeFile(_ path: String, megabytes: Int, seed: UInt64) throws {
        var block = UploadCommandLiveTests.bytes(1 << 20, seed: seed)
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        for index in 0..<megabytes {
            for byte in 0..<8 { block[byte] = UInt8(truncatingIfNeeded: index >> (8 * byte)) }
            try handle.write(contentsOf: block)
        }
    }

    /// True when the two files hold the same bytes.
    static func sameBytes(_ left: String, _ right: String) throws -> Bool {
        let a = try FileHandle(forReadingFrom: URL(fileURLWithPath: left))
        let b = try FileHandle(forReadingFrom: URL(fileURLWithPath: right))
        defer {
            try? a.close()
            try? b.close()
        }
        while true {
            let x = try a.read(upToCount: 4 << 20) ?? Data()
            let y = try b.read(upToCount: 4 << 20) ?? Data()
            guard x == y else { return false }
            if x.isEmpty { return true }
        }
    }

    /// One run's `--json` events, summed.
    struct Run {
        var reusedBytes: Int64
        var acknowledged: [Int: Int64]
        var wire: Int64

        init(_ child: UploadChild, wire: Int64) throws {
            let events = child.events
            let resume = try #require(events.first { $0["event"] as? String == "resume" }, "\(child.stderr)")
            reusedBytes = Int64(try #require(resume["reused_bytes"] as? Int))
            acknowledged = [:]
            for event in events where event["event"] as? String == "chunk" {
                let index = try #require(event["index"] as? Int)
                acknowledged[index] = Int64(try #require(event["length"] as? Int))
            }
            self.wire = wire
        }

        var acknowledgedBytes: Int64 { acknowledged.values.reduce(0, +) }
    }

    @Test func killDashNineAtTwentySeededPointsThenTheSameCommandFinishesByteIdentical() throws {
        let megabytes = Self.torture ? 1024 : 128
        let chunk: Int64 = 1 << 20
        let parallel: Int64 = 4
        let receiver = try ReceiverChild()
        let receiverPort = try #require(Int(receiver.url.split(separator: ":").last ?? ""))
        let relay = try FaultRelay(targetPort: receiverPort)
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/input.bin"
        try Self.writeFile(path, megabytes: megabytes, seed: 1717)
        let size = Int64(megabytes) << 20
        let arguments = [
            "upload", path, relay.url + "/uploads", "--state-dir", directory + "/state", "--json", "--chunk-size",
            "1M", "--parallel", String(parallel), "--protocol", "native",
        ]

        // Twenty seeded kill points: a share of the file acknowledged, plus a seeded 0-20 ms so the kill lands
        // between requests or inside a part's body.
        var generator = SplitMix64(seed: 0x70_77_0e)
        let points = (0..<20).map { _ in size / 50 + Int64(generator.next() % UInt64(size * 9 / 10)) }.sorted()
        var runs: [Run] = []
        for point in points {
            let before = try relay.counters.up
            let child = try UploadChild(arguments)
            try SessionLive.wait("the upload to pass byte \(point)", timeout: 120) {
                let events = child.events
                let reused = events.first { $0["event"] as? String == "resume" }?["reused_bytes"] as? Int
                let acknowledged = events.filter { $0["event"] as? String == "chunk" }
                    .reduce(0) { $0 + ($1["length"] as? Int ?? 0) }
                return reused.map { Int64($0 + acknowledged) >= point } ?? false || !child.process.isRunning
            }
            usleep(UInt32(generator.next() % 20_000))
            child.signal(SIGKILL)
            let status = try child.wait()
            #expect(status == SIGKILL || status == 128 + SIGKILL, "the run ended before the kill: \(child.stderr)")
            runs.append(try Run(child, wire: try relay.counters.up - before))
        }
        let before = try relay.counters.up
        let last = try UploadChild(arguments)
        let status = try last.wait(timeout: Self.torture ? 900 : 300)
        #expect(status == 0, "\(last.stderr)")
        runs.append(try Run(last, wire: try relay.counters.up - before))
        let done = try UploadCommandLiveTests.completed(last)
        #expect(done["server_verified"] as? [String] == ["byzantine-sample", "sha256", "merkle-root", "chain-head"])
        let location = try #require(done["location"] as? String)
        let id = String(location.split(separator: "/").last ?? "")
        #expect(try Self.sameBytes(receiver.store + "/objects/" + id, path))

        // No part is acknowledged twice: a resumed run never sends what the receiver holds.
        var seen = Set<Int>()
        for run in runs {
            #expect(seen.isDisjoint(with: run.acknowledged.keys))
            seen.formUnion(run.acknowledged.keys)
        }
        var resent: [Int64] = []
        for (run, next) in zip(runs, runs.dropFirst()) {
            // Nothing acknowledged is lost, and the receiver kept at most the parts in flight beyond that.
            let kept = next.reusedBytes - run.reusedBytes
            #expect(kept >= run.acknowledgedBytes)
            #expect(kept - run.acknowledgedBytes <= parallel * chunk)
            // What this run sent that the receiver did not keep: the parts in flight at the kill (sent again by
            // the next run), plus request heads and answers' requests (4 KiB a request is generous).
            let wasted = run.wire - kept
            let requests = Int64(run.acknowledged.count) + parallel + 16
            #expect(wasted <= parallel * chunk + requests * 4096, "run \(resent.count): \(wasted) bytes wasted")
            resent.append(max(0, wasted))
        }
        #expect(runs.last.map { $0.reusedBytes + $0.acknowledgedBytes } == size)
        let total = runs.reduce(0) { $0 + $1.wire }
        print(
            "client crash torture: \(megabytes) MiB, 20 kills, bytes re-sent after each resume: "
                + "\(resent.map(String.init).joined(separator: " ")); max \(resent.max() ?? 0), "
                + "total on the wire \(total) (\(String(format: "%.3f", Double(total) / Double(size)))x the file)")
    }
}
