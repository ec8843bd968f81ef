import AetherIO
import AetherTransport
import Foundation
import Testing

/// `aether serve` against clients that stretch an upload's lifecycle (issue 24): one append slower than the expiry,
/// a connection that freezes mid-append and is retried, tus concatenation naming one partial many times. Requests
/// go through the project's HTTP client or raw sockets (`peers/stream_client.py`).
@Suite struct ReceiverAbuseLiveTests: SeededContent {
    /// A byte-stream protocol spoken by the tests, with the headers of each request.
    enum StreamProtocol: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case tus
        case ietf
        var testDescription: String { rawValue }

        var common: [(String, String)] {
            switch self {
            case .tus: [("Tus-Resumable", "1.0.0")]
            case .ietf: [("Upload-Draft-Interop-Version", "8")]
            }
        }

        func create(size: Int) -> [(String, String)] {
            switch self {
            case .tus: common + [("Upload-Length", String(size))]
            case .ietf: common + [("Upload-Complete", "?0"), ("Upload-Length", String(size))]
            }
        }

        func append(offset: Int, completes: Bool) -> [(String, String)] {
            switch self {
            case .tus:
                common + [("Upload-Offset", String(offset)), ("Content-Type", "application/offset+octet-stream")]
            case .ietf:
                common + [
                    ("Upload-Offset", String(offset)), ("Upload-Complete", completes ? "?1" : "?0"),
                    ("Content-Type", "application/partial-upload"),
                ]
            }
        }

        /// The status a successful append answers with (IETF: 200 once complete).
        func appended(completes: Bool) -> Int { self == .ietf && completes ? 200 : 204 }
        /// The status a successful HEAD answers with.
        var headed: Int { self == .tus ? 200 : 204 }
    }

    /// A running `aether serve` on a store of its own.
    struct Server {
        let process: AetherProcess
        let url: String
        let port: Int
        let store: String

        func path(_ id: String, _ kind: String = "objects") -> String { store + "/\(kind)/" + id }
    }

    static func serve(_ arguments: [String] = [], store: String? = nil) throws -> Server {
        let store = try store ?? SessionLive.temporaryDirectory() + "/store"
        let process = try AetherProcess(
            ["serve", "--dir", store, "--port", "0"] + arguments, inputBytes: [], keepInputOpen: true)
        var url: String?
        try SessionLive.wait("aether serve to listen", timeout: 30) {
            url = process.stdout.split(separator: "\n").first { $0.hasPrefix("listening on ") }
                .map { String($0.dropFirst("listening on ".count)) }
            return url != nil || !process.process.isRunning
        }
        let found = try #require(url, "aether serve did not start: \(process.stderr)")
        let port = try #require(Int(found.split(separator: ":").last ?? ""))
        return Server(process: process, url: found, port: port, store: store)
    }

    static func request(
        _ method: String, _ url: String, _ headers: [(String, String)], body: HTTPRequestBody = .empty
    ) -> HTTPRequest {
        HTTPRequest(
            method: method, url: url, headers: HTTPHeaders(headers), body: body,
            timeouts: HTTPTimeouts(connect: .seconds(10), idle: .seconds(30), total: .seconds(120)))
    }

    /// Runs `peers/stream_client.py` with `order` (the content written to a file first); its JSON answer.
    static func streamClient(_ order: [String: Any], content: [UInt8]) throws -> [String: Any] {
        let file = try SessionLive.temporaryDirectory() + "/content.bin"
        try Data(content).write(to: URL(fileURLWithPath: file))
        var order = order
        order["file"] = file
        let output = try PythonPeer.run("stream_client.py", input: try JSONSerialization.data(withJSONObject: order))
        return try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
    }

    static func status(_ answer: Any?) -> Int? { (answer as? [String: Any])?["status"] as? Int }
    static func header(_ answer: Any?, _ name: String) -> String? {
        ((answer as? [String: Any])?["headers"] as? [String: String])?[name]
    }
    static func id(_ path: Any?) -> String { String((path as? String)?.split(separator: "/").last ?? "") }

    // MARK: Defect 1: an append slower than the expiry

    /// One append whose body takes several expiry times to arrive, under `--expire-after 3` (the sweep then runs
    /// every 0.75 s): every HEAD during it answers the upload (never 410), the append completes, the object is
    /// byte-identical. An idle upload beside it still expires, by the sweep alone. The client is a Python process
    /// on raw sockets with its own clock: the gap between the creation and the append is idle time, which a busy
    /// test process must not stretch.
    @Test(arguments: StreamProtocol.allCases) func anAppendSlowerThanTheExpiryCompletesAndIsNeverGone(
        _ proto: StreamProtocol
    ) async throws {
        let server = try Self.serve(["--expire-after", "3"])
        defer { server.process.stop() }
        let content = Self.bytes(320_000, seed: 2401)
        let result = try Self.streamClient(
            [
                "mode": "slow", "port": server.port, "protocol": proto.rawValue, "pieces": 80, "interval": 0.1,
                "probe_every": 5,
            ], content: content)
        let heads = try #require(result["heads"] as? [Int])
        // The body took more than twice the expiry time; no HEAD found the upload gone.
        #expect(try #require(result["seconds"] as? Double) >= 8)
        #expect(heads.count == 16)
        #expect(heads.allSatisfy { $0 == proto.headed }, "HEAD answers: \(heads)")
        #expect(Self.status(result["patch"]) == proto.appended(completes: true), "\(result)")
        #expect(Self.header(result["patch"], "upload-offset") == String(content.count))
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: server.path(Self.id(result["path"])))))
        #expect(stored == content)
        // The idle upload (3 bytes in its creation) was swept meanwhile: its stream is gone without any request.
        #expect(result["idle_created"] as? Int == 201)
        let idle = try #require(result["idle_path"] as? String)
        #expect(!FileManager.default.fileExists(atPath: server.path(Self.id(idle), "streams")))
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let gone = try await client.send(Self.request("HEAD", server.url + idle, proto.common))
        #expect(gone.status == 410)
    }

    // MARK: Defect 8: a connection frozen mid-append

    /// The first `PATCH` sends half its body and freezes (the socket stays open, nothing more arrives). The same
    /// client's `HEAD` answers the committed offset at once, and its new `PATCH` from there takes the stale one over
    /// within the receiver's claim wait (2 s), not after the 60 s connection timeout; the object is byte-identical.
    @Test(arguments: StreamProtocol.allCases) func aNewAppendTakesAFrozenOneOverAndTheUploadCompletesAtOnce(
        _ proto: StreamProtocol
    ) async throws {
        let server = try Self.serve()
        defer { server.process.stop() }
        let content = Self.bytes(2 << 20, seed: 2408)
        let result = try Self.streamClient(
            [
                "mode": "frozen", "port": server.port, "protocol": proto.rawValue, "send": content.count / 2,
                "store": server.store,
            ],
            content: content)
        #expect(Self.status(result["head"]) == proto.headed, "\(result)")
        // Nothing of the frozen request was committed.
        #expect(Self.header(result["head"], "upload-offset") == "0")
        #expect(Self.status(result["patch"]) == proto.appended(completes: true), "\(result)")
        #expect(Self.header(result["patch"], "upload-offset") == String(content.count))
        // Resumed at once: the claim wait, far below the 60 s connection timeout that held it before.
        #expect(try #require(result["seconds"] as? Double) < 20)
        let path = try #require(result["path"] as? String)
        let object = server.path(Self.id(path))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: object))) == content)
        // The frozen connection has ended now; waking, it changed nothing.
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let after = try await client.send(Self.request("HEAD", server.url + path, proto.common))
        #expect(after.headers["Upload-Offset"] == String(content.count))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: object))) == content)
    }

    // MARK: Defect 6(c): tus concatenation

    /// `/proc/PID/io`'s `wchar` of the receiver: the bytes its system calls wrote (files, sockets, the log). Reads
    /// are not measured this way: the store reads partials through `mmap`, which `rchar` does not count.
    static func written(_ server: Server) throws -> Int {
        let text = try String(
            contentsOfFile: "/proc/\(server.process.process.processIdentifier)/io", encoding: .utf8)
        var fields: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":")
            if parts.count == 2 { fields[String(parts[0])] = Int(parts[1].trimmingCharacters(in: .whitespaces)) }
        }
        return try #require(fields["wchar"])
    }

    static func partial(_ bytes: [UInt8], on server: Server, client: HTTPClient) async throws -> String {
        var headers = StreamProtocol.tus.create(size: bytes.count)
        headers.append(("Upload-Concat", "partial"))
        let created = try await client.send(request("POST", server.url + "/uploads", headers))
        let path = try #require(created.headers["Location"])
        let sent = try await client.send(
            request(
                "PATCH", server.url + path, StreamProtocol.tus.append(offset: 0, completes: true),
                body: .bytes(bytes)))
        #expect(sent.status == 204)
        return path
    }

    /// A final naming one partial 1,000 times is refused with 400 and makes the receiver write almost nothing; a
    /// final of distinct partials writes their sizes once, within a small margin (the catalogue's pages, the log
    /// line), measured on the receiver process.
    @Test func concatenationWritesAtMostItsDistinctPartialsAndRefusesOneNamedTwice() async throws {
        let server = try Self.serve()
        defer { server.process.stop() }
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let parts = [Self.bytes(1 << 20, seed: 2461), Self.bytes(1 << 20, seed: 2462), Self.bytes(512 << 10, seed: 3)]
        var paths: [String] = []
        for part in parts { paths.append(try await Self.partial(part, on: server, client: client)) }
        let margin = 256 << 10

        for names in [Array(repeating: paths[0], count: 1000), [paths[0], paths[1], paths[0]]] {
            let before = try Self.written(server)
            let refused = try await client.send(
                Self.request(
                    "POST", server.url + "/uploads",
                    StreamProtocol.tus.common + [("Upload-Concat", "final;" + names.joined(separator: " "))]))
            let after = try Self.written(server)
            #expect(refused.status == 400, "\(String(decoding: refused.body, as: UTF8.self))")
            #expect(after - before < margin, "wrote \(after - before) bytes")
        }

        let total = parts.reduce(0) { $0 + $1.count }
        let before = try Self.written(server)
        let final = try await client.send(
            Self.request(
                "POST", server.url + "/uploads",
                StreamProtocol.tus.common + [("Upload-Concat", "final;" + paths.joined(separator: " "))]))
        let written = try Self.written(server) - before
        #expect(final.status == 201, "\(String(decoding: final.body, as: UTF8.self))")
        #expect(written >= total && written < total + margin, "a \(total)-byte final wrote \(written) bytes")
        let location = try #require(final.headers["Location"])
        let id = String(location.split(separator: "/").last ?? "")
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: server.path(id))))
        #expect(stored == parts.flatMap { $0 })
    }

    // MARK: Challenges on many connections at once

    /// `VmHWM` of the receiver in KiB: its peak resident set so far.
    static func peakRSS(_ server: Server) throws -> Int {
        let status = try String(
            contentsOfFile: "/proc/\(server.process.process.processIdentifier)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try #require(Int(line.split(separator: " ").dropFirst().first ?? ""))
    }

    /// 32 spot checks at once, each a 70-byte request asking one 16 MiB range of a stored chunk: the receiver holds
    /// a bounded piece of each range while it computes the MAC, not the whole range. Each request held its range
    /// whole, so these took 512 MiB (60 of them: 1 GB of resident memory, measured), and 1,024 connections could
    /// make the receiver hold 16 GiB.
    @Test func challengesOnManyConnectionsAtOnceHoldLittleMemory() throws {
        let server = try Self.serve()
        defer { server.process.stop() }
        let directory = try SessionLive.temporaryDirectory()
        let file = directory + "/object.bin"
        try Data(Self.bytes(16 << 20, seed: 2471)).write(to: URL(fileURLWithPath: file))
        let upload = try UploadChild([
            "upload", file, server.url + "/uploads", "--state-dir", directory + "/state", "--json", "--chunk-size",
            "16M", "--flags", "-dedup",
        ])
        #expect(try upload.wait() == 0, "\(upload.stderr)")
        let location = try #require(try UploadCommandLiveTests.completed(upload)["location"] as? String)
        let before = try Self.peakRSS(server)
        let count = 32
        var curls: [(Process, Pipe)] = []
        for _ in 0..<count {
            let nonce = Data(SecureRandom.bytes(32)).base64EncodedString()
            let body = "{\"items\":[{\"index\":0,\"length\":16777216,\"offset\":0}],\"nonce\":\"\(nonce)\",\"v\":2}"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = [
                "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--noproxy", "*", "--max-time", "60", "-X", "POST",
                "-H", "Aether-Protocol: 1", "-H", "Content-Type: application/aether-challenge+json", "--data-binary",
                body, location + "/challenges",
            ]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            curls.append((process, output))
        }
        for (process, output) in curls {
            let status = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(status == "200")
        }
        let grown = try Self.peakRSS(server) - before
        // A MiB a request at most (plus the threads' stacks), where holding the ranges would take 512 MiB.
        #expect(grown < 128 * 1024, "the receiver's peak resident set grew by \(grown) KiB")
        print("32 concurrent 16 MiB challenges: the receiver's peak grew by \(grown / 1024) MiB")
    }
}
