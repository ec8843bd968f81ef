import AetherIO
import Foundation
import Testing

/// Crash safety of `aether serve` under the native protocol, through the CLI (issue 13): 20 `aether upload`s run at
/// once (parts out of order, two streams each) while the receiver is killed with SIGKILL at seeded points and
/// restarted on the same store and port. Every upload finishes (its retries reach the new receiver) with the
/// receiver's full verification, every object is byte-identical, no object is ever visible partially, and the
/// catalogue passes `PRAGMA integrity_check`. A lost acknowledged chunk would fail the completion (the client never
/// sends an acknowledged part again).
@Suite struct ReceiverCrashNativeLiveTests: SeededContent {
    static func integrityCheck(_ database: String) throws -> String {
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        check.arguments = [
            "-c",
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
            database,
        ]
        let output = Pipe()
        check.standardOutput = output
        try check.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        check.waitUntilExit()
        return text
    }

    @Test func killNineOfTheReceiverDuringTwentyCLIUploadsLosesNothingAndShowsNoPartialObject() throws {
        let store = try SessionLive.temporaryDirectory() + "/store"
        var (server, url) = try UploadResumeEdgeLiveTests.serve(store: store)
        let port = try #require(Int(url.split(separator: ":").last ?? ""))
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var contents: [[UInt8]] = []
        var clients: [UploadChild] = []
        for index in 0..<20 {
            let content = Self.bytes((2 << 20) + index * 4099, seed: UInt64(9100 + index))
            let path = directory + "/file\(index).bin"
            try Data(content).write(to: URL(fileURLWithPath: path))
            contents.append(content)
            clients.append(
                try UploadChild([
                    "upload", path, url + "/uploads", "--state-dir", directory + "/state", "--json", "--chunk-size",
                    "256K", "--parallel", "2", "--protocol", "native",
                ]))
        }
        let hashes = Set(contents.map { SHA256.hash($0) })
        func acknowledged() -> Int {
            clients.reduce(0) { $0 + $1.events.filter { $0["event"] as? String == "chunk" }.count }
        }
        func noPartialObject() throws {
            let objects = (try? FileManager.default.contentsOfDirectory(atPath: store + "/objects")) ?? []
            for name in objects where !name.hasPrefix(".") {
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store + "/objects/" + name)))
                #expect(hashes.contains(SHA256.hash(bytes)), "object \(name) is not a whole upload")
            }
        }

        // Eight kills after seeded numbers of acknowledged parts (of 180), plus a seeded 0-10 ms.
        var generator = SplitMix64(seed: 1313)
        let targets = (0..<8).map { _ in 5 + Int(generator.next() % 150) }.sorted()
        var kills = 0
        for target in targets {
            try SessionLive.wait("\(target) acknowledged parts", timeout: 120) {
                acknowledged() >= target || clients.allSatisfy { !$0.process.isRunning }
            }
            guard clients.contains(where: { $0.process.isRunning }) else { break }
            usleep(UInt32(generator.next() % 10_000))
            server.signal(SIGKILL)
            _ = try server.wait()
            #expect(server.process.terminationReason == .uncaughtSignal)
            kills += 1
            try noPartialObject()
            (server, url) = try UploadResumeEdgeLiveTests.serve(store: store, port: port)
        }
        #expect(kills >= 4)
        for (index, client) in clients.enumerated() {
            let status = try client.wait(timeout: 180)
            #expect(status == 0, "upload \(index): \(client.stderr)")
            let done = try UploadCommandLiveTests.completed(client)
            #expect(
                done["server_verified"] as? [String] == ["byzantine-sample", "sha256", "merkle-root", "chain-head"])
            #expect(try UploadResumeEdgeLiveTests.object(store, done) == contents[index])
        }
        try noPartialObject()
        server.signal(SIGTERM)
        _ = try server.wait()
        #expect(try Self.integrityCheck(store + "/catalog.sqlite3") == "ok\n")
        let retries = clients.reduce(0) { $0 + $1.events.filter { $0["event"] as? String == "retry" }.count }
        print(
            "receiver crash (native, CLI): 20 uploads, \(kills) kills, \(retries) retried requests, all byte-identical")
    }
}
