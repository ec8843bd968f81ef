import AetherIO
import AetherReceiver
import AetherTransport
import Foundation
import Synchronization
import Testing

/// A router that echoes what the server delivered: headers, raw path, the body's SHA-256 and piece count.
private final class EchoRouter: HTTPRequestRouter {
    let interruptions = Atomic<Int>(0)
    let ended = Mutex<[(String, Int?, Int64)]>([])
    let release = Atomic<Bool>(true)

    final class Sink: HTTPRequestSink, @unchecked Sendable {
        // @unchecked: the server calls a sink from one connection thread, one call at a time.
        let router: EchoRouter
        let request: HTTPServerRequest
        var hasher = SHA256()
        var pieces = 0
        var bytes = 0
        init(router: EchoRouter, request: HTTPServerRequest) {
            self.router = router
            self.request = request
        }
        func receive(_ bytes: UnsafeRawBufferPointer) {
            unsafe hasher.update(bytes)
            pieces += 1
            self.bytes += bytes.count
        }
        func finish() -> HTTPServerResponse {
            while !router.release.load(ordering: .relaxed) { usleep(1000) }
            var response = HTTPServerResponse(status: 201, body: Array(Hex.encode(hasher.finalize().bytes).utf8))
            response.add("X-Pieces", String(pieces))
            response.add("X-Bytes", String(bytes))
            response.add("X-Path", request.path)
            response.add("X-Dup", request.values("X-Dup").joined(separator: "|"))
            return response
        }
        func interrupted() { router.interruptions.add(1, ordering: .relaxed) }
    }

    func start(_ request: HTTPServerRequest) -> HTTPRequestStart {
        if request.method == "GET" {
            var response = HTTPServerResponse(status: 200, body: Array("ok".utf8))
            response.add("X-Path", request.path)
            response.add("X-Loopback", request.isLoopback ? "yes" : "no")
            return .respond(response)
        }
        return .stream(Sink(router: self, request: request))
    }

    func ended(_ request: HTTPServerRequest, status: Int?, bytesReceived: Int64, nanoseconds: UInt64) {
        ended.withLock { $0.append((request.method, status, bytesReceived)) }
    }
}

@Suite struct HTTPServerTests {
    @Test func aBodyIsStreamedInPiecesAndHeadersKeepTheirDuplicates() async throws {
        let router = EchoRouter()
        let server = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
        defer { server.stop() }
        #expect(server.port != 0)
        var body = [UInt8](repeating: 0, count: 5 << 20)
        var generator = SplitMix64(seed: 7)
        for index in body.indices { body[index] = UInt8(truncatingIfNeeded: generator.next()) }
        let response = try await HTTPClient.shared().send(
            HTTPRequest(
                method: "PUT", url: "http://127.0.0.1:\(server.port)/a%2fb/%2e%2e/c",
                headers: HTTPHeaders([("X-Dup", "one"), ("X-Dup", "two")]), body: .bytes(body)))
        #expect(response.status == 201)
        #expect(String(decoding: response.body, as: UTF8.self) == Hex.encode(SHA256.hash(body).bytes))
        #expect(Int(response.headers["X-Pieces"] ?? "") ?? 0 > 1)
        #expect(response.headers["X-Bytes"] == String(body.count))
        #expect(response.headers["X-Path"] == "/a%2fb/%2e%2e/c")
        #expect(response.headers["X-Dup"] == "one|two")
    }

    @Test func aBodyCutShortReachesTheSinkAsInterrupted() throws {
        let router = EchoRouter()
        let server = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)
        connection.send("PUT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n")
        connection.send([UInt8](repeating: 1, count: 1000))
        usleep(100_000)
        connection.close()
        var waited = 0
        while router.interruptions.load(ordering: .relaxed) == 0, waited < 500 {
            usleep(10_000)
            waited += 1
        }
        #expect(router.interruptions.load(ordering: .relaxed) == 1)
        let ended = router.ended.withLock { $0 }
        #expect(ended.count == 1)
        #expect(ended.first?.1 == nil)
    }

    @Test func aGracefulStopLetsTheRequestUnderWayFinish() async throws {
        let router = EchoRouter()
        router.release.store(false, ordering: .relaxed)
        let server = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
        let port = server.port
        let task = Task {
            try await HTTPClient.shared().send(
                HTTPRequest(method: "PUT", url: "http://127.0.0.1:\(port)/slow", body: .bytes([1, 2, 3])))
        }
        while server.requestsInFlight == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let stopper = Thread { server.stop() }
        stopper.start()
        try await Task.sleep(for: .milliseconds(100))
        // Stopped accepting: a new connection is refused while the first request still runs.
        #expect(throws: (any Error).self) { try RawHTTPConnection(port: port) }
        router.release.store(true, ordering: .relaxed)
        let response = try await task.value
        #expect(response.status == 201)
        #expect(router.interruptions.load(ordering: .relaxed) == 0)
    }

    @Test func aGetIsAnsweredAtOnceAndTheClientIsLoopback() async throws {
        let server = try HTTPServer(configuration: HTTPServerConfiguration(), router: EchoRouter())
        defer { server.stop() }
        let response = try await HTTPClient.shared().send(
            HTTPRequest(method: "GET", url: "http://127.0.0.1:\(server.port)/healthz"))
        #expect(response.status == 200)
        #expect(response.body == Array("ok".utf8))
        #expect(response.headers["X-Loopback"] == "yes")
    }

    @Test func httpsServesWithAPEMCertificateAndKey() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aether-tls-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem",
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        #expect(openssl.terminationStatus == 0)
        var configuration = HTTPServerConfiguration()
        configuration.tls = (
            try String(contentsOfFile: directory + "/cert.pem", encoding: .utf8),
            try String(contentsOfFile: directory + "/key.pem", encoding: .utf8)
        )
        let server = try HTTPServer(configuration: configuration, router: EchoRouter())
        defer { server.stop() }
        #expect(server.isTLS)
        let https = try Curl.run(["-k", "https://127.0.0.1:\(server.port)/healthz"])
        #expect(https.status == 200)
        #expect(https.body == "ok")
        let plain = try Curl.run(["http://127.0.0.1:\(server.port)/healthz"])
        #expect(plain.status != 200)
        configuration.tls = ("not a certificate", "not a key")
        #expect(throws: ReceiverError.self) { _ = try HTTPServer(configuration: configuration, router: EchoRouter()) }
    }

    /// Polls `condition` every 20 ms for up to `seconds`; returns whether it became true.
    static func within(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < end {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    @Test func aHeaderDrippedAByteAtATimeIsCutAtTheDeadlineFromTheAccept() throws {
        let server = try HTTPServer(
            configuration: HTTPServerConfiguration(idleTimeoutSeconds: 2, headerTimeoutSeconds: 1), router: EchoRouter()
        )
        defer { server.stop() }
        let slow = try RawHTTPConnection(port: server.port)
        let opened = ContinuousClock.now
        slow.send("GET /x HTTP/1.1\r\nHost: a\r\nX-Slow: ")
        // A byte every 100 ms: the idle timeout (2 s) never fires, the header deadline (1 s from the accept) does.
        while !slow.peerClosed(), ContinuousClock.now - opened < .seconds(5) {
            slow.send("a")
            usleep(100_000)
        }
        let lifetime = ContinuousClock.now - opened
        #expect(slow.peerClosed())
        #expect(lifetime >= .milliseconds(900))
        #expect(lifetime < .seconds(3))
        #expect(server.statistics.closedHeaderTimeout == 1)
        // A client that sends its request in time is served; its next head, dripped on the kept-alive connection,
        // is cut at the keep-alive deadline (the idle timeout, 2 s, from the end of the request), not later.
        let prompt = try RawHTTPConnection(port: server.port)
        prompt.send("GET /y HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(prompt.receiveHead().hasPrefix("HTTP/1.1 200"))
        #expect(prompt.receive(count: 2) == Array("ok".utf8))
        let answered = ContinuousClock.now
        prompt.send("GET /z HTTP/1.1\r\nHost: a\r\nX-Slow: ")
        while !prompt.peerClosed(), ContinuousClock.now - answered < .seconds(6) {
            prompt.send("a")
            usleep(100_000)
        }
        let kept = ContinuousClock.now - answered
        #expect(prompt.peerClosed())
        #expect(kept >= .milliseconds(1800))
        #expect(kept < .seconds(4))
        #expect(server.statistics.closedHeaderTimeout == 2)
    }

    @Test func connectionsPastThePerClientLimitAreRefusedAtOnce() throws {
        let server = try HTTPServer(
            configuration: HTTPServerConfiguration(perClientConnectionLimit: 3), router: EchoRouter())
        defer { server.stop() }
        let held = try (0..<3).map { _ in try RawHTTPConnection(port: server.port) }
        #expect(Self.within(2) { server.statistics.open == 3 })
        let extra = try RawHTTPConnection(port: server.port)
        #expect(Self.within(2) { extra.peerClosed() })
        #expect(server.statistics.refusedPerClient == 1)
        #expect(held.allSatisfy { !$0.peerClosed() })
        held[0].close()
        #expect(Self.within(2) { server.statistics.open == 2 })
        let again = try RawHTTPConnection(port: server.port)
        again.send("GET /z HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(again.receiveHead().hasPrefix("HTTP/1.1 200"))
        #expect(server.statistics.refusedPerClient == 1)
        #expect(server.statistics.perClientLimit == 3)
    }

    @Test func anAddressThatIsNotIPIsRefused() {
        #expect(throws: ReceiverError.self) {
            _ = try HTTPServer(configuration: HTTPServerConfiguration(bindAddress: "localhost"), router: EchoRouter())
        }
    }
}
