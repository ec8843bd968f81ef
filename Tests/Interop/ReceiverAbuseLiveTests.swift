import AetherIO
import AetherTransport
import Foundation
import Testing

/// `aether serve` against clients that stretch an upload's lifecycle (issue 24): one append slower than the expiry,
/// a connection that freezes mid-append and is retried, tus concatenation naming one partial many times and
/// running out of space. Requests go through the project's HTTP client or a raw socket (`peers/frozen_append.py`).
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

    /// Creates an upload of `size` bytes; its path (`/uploads/ID`).
    static func create(_ proto: StreamProtocol, size: Int, on server: Server, client: HTTPClient) async throws
        -> String
    {
        let created = try await client.send(request("POST", server.url + "/uploads", proto.create(size: size)))
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        return try #require(created.headers["Location"])
    }

    // MARK: Defect 1: an append slower than the expiry

    /// One append whose body takes several expiry times to arrive, under `--expire-after 3` (the sweep then runs
    /// every 0.75 s): every HEAD during it answers the upload (never 410), the append completes, the object is
    /// byte-identical. An idle upload beside it still expires, by the sweep alone. The append starts right after
    /// the creation: the time between them is idle time, which a loaded machine must not stretch to an expiry.
    @Test(arguments: StreamProtocol.allCases) func anAppendSlowerThanTheExpiryCompletesAndIsNeverGone(
        _ proto: StreamProtocol
    ) async throws {
        let server = try Self.serve(["--expire-after", "3"])
        defer { server.process.stop() }
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let pieces = 80
        let pieceSize = 4000
        let content = Self.bytes(pieces * pieceSize, seed: 2401)
        let path = try await Self.create(proto, size: content.count, on: server, client: client)
        let id = String(path.split(separator: "/").last ?? "")
        let body = HTTPBodyStream(length: Int64(content.count))
        let appending = Task {
            try await client.send(
                Self.request(
                    "PATCH", server.url + path, proto.append(offset: 0, completes: true), body: .stream(body)))
        }
        let started = ContinuousClock.now
        // The idle upload holds a few committed bytes, so the sweep has a stream file to remove.
        let idlePath = try await Self.create(proto, size: 100, on: server, client: client)
        let idleID = String(idlePath.split(separator: "/").last ?? "")
        let first = try await client.send(
            Self.request(
                "PATCH", server.url + idlePath, proto.append(offset: 0, completes: false), body: .bytes([1, 2, 3])))
        #expect(first.status == 204)
        #expect(FileManager.default.fileExists(atPath: server.path(idleID, "streams")))

        var heads: [Int] = []
        do {
            for piece in 0..<pieces {
                try await body.write(Array(content[(piece * pieceSize)..<((piece + 1) * pieceSize)]))
                try await Task.sleep(for: .milliseconds(100))
                if piece % 5 == 4 {
                    let head = try await client.send(Self.request("HEAD", server.url + path, proto.common))
                    heads.append(head.status)
                }
            }
            body.finish()
        } catch {
            // The receiver answered before the body ended: the answer below says why.
            Issue.record("the body could not be sent whole: \(error); HEAD answers so far: \(heads)")
        }
        let answer = try await appending.value
        let elapsed = started.duration(to: .now)
        // The body took more than twice the expiry time; no HEAD found the upload gone.
        #expect(elapsed >= .seconds(8))
        #expect(heads.count == pieces / 5)
        #expect(heads.allSatisfy { $0 == proto.headed }, "HEAD answers: \(heads)")
        #expect(answer.status == proto.appended(completes: true), "\(String(decoding: answer.body, as: UTF8.self))")
        #expect(answer.headers["Upload-Offset"] == String(content.count))
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: server.path(id))))
        #expect(stored == content)
        // The idle upload was swept meanwhile: its stream is gone without any request naming it.
        #expect(!FileManager.default.fileExists(atPath: server.path(idleID, "streams")))
        let gone = try await client.send(Self.request("HEAD", server.url + idlePath, proto.common))
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
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let content = Self.bytes(2 << 20, seed: 2408)
        let directory = try SessionLive.temporaryDirectory()
        let file = directory + "/content.bin"
        try Data(content).write(to: URL(fileURLWithPath: file))
        let path = try await Self.create(proto, size: content.count, on: server, client: client)
        let id = String(path.split(separator: "/").last ?? "")

        // The frozen first attempt.
        var head = "PATCH \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nContent-Length: \(content.count)\r\n"
        for (name, value) in proto.append(offset: 0, completes: true) { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let frozen = try PythonPeer.process("frozen_append.py")
        let input = Pipe()
        let output = Pipe()
        frozen.standardInput = input
        frozen.standardOutput = output
        try frozen.run()
        defer {
            try? input.fileHandleForWriting.close()
            frozen.waitUntilExit()
        }
        let order = try JSONSerialization.data(withJSONObject: [
            "port": server.port, "head": head, "body_file": file, "send": content.count / 2,
        ])
        input.fileHandleForWriting.write(order + Data("\n".utf8))
        let line = output.fileHandleForReading.availableLine()
        #expect(line.contains("\"sent\": \(content.count / 2)"), "frozen_append.py said \(line)")
        // The receiver has taken (part of) the bytes by now; nothing was committed.
        try SessionLive.wait("the frozen append's bytes to reach the stream", timeout: 20) {
            ((try? FileManager.default.attributesOfItem(atPath: server.path(id, "streams")))?[.size] as? Int ?? 0)
                > 0
        }

        let started = ContinuousClock.now
        let status = try await client.send(Self.request("HEAD", server.url + path, proto.common))
        #expect(status.status == proto.headed)
        let offset = try #require(Int(status.headers["Upload-Offset"] ?? ""))
        #expect(offset == 0)
        let retry = try await client.send(
            Self.request(
                "PATCH", server.url + path, proto.append(offset: offset, completes: true),
                body: .bytes(Array(content[offset...]))))
        let elapsed = started.duration(to: .now)
        #expect(retry.status == proto.appended(completes: true), "\(String(decoding: retry.body, as: UTF8.self))")
        #expect(retry.headers["Upload-Offset"] == String(content.count))
        // Resumed at once: the claim wait, far below the 60 s connection timeout that held it before.
        #expect(elapsed < .seconds(20))
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: server.path(id))))
        #expect(stored == content)
        // The frozen connection ends now; waking, it changes nothing.
        try? input.fileHandleForWriting.close()
        frozen.waitUntilExit()
        let after = try await client.send(Self.request("HEAD", server.url + path, proto.common))
        #expect(after.headers["Upload-Offset"] == String(content.count))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: server.path(id)))) == content)
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
}

extension FileHandle {
    /// One line of output (without its newline), read a byte at a time so nothing past it is consumed.
    fileprivate func availableLine() -> String {
        var bytes: [UInt8] = []
        while true {
            let data = readData(ofLength: 1)
            guard let byte = data.first, byte != UInt8(ascii: "\n") else { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
