import AetherIO
import AetherSecurity
import AetherTransport
import Foundation
import Testing

/// The libcurl HTTP client against live peers on 127.0.0.1 (`peers/http_peer.py`: hypercorn for HTTP/1.1, h2c
/// and TLS; a raw socket server for informational responses and faults).
@Suite struct HTTPClientInteropTests: SeededContent {
    /// For stream bodies: their writer is a task of this process, and a loaded `make test` can keep the
    /// cooperative pool busy for tens of seconds, so no idle limit (the request waits for the writer).
    static let patient = HTTPTimeouts(idle: nil)

    static func echo(_ response: HTTPResponse) throws -> PeerEcho {
        try JSONDecoder().decode(PeerEcho.self, from: Data(response.body))
    }

    static func client(_ configuration: HTTPClientConfiguration = HTTPClientConfiguration(proxy: .none)) throws
        -> HTTPClient
    {
        try HTTPClient(configuration: configuration)
    }

    // MARK: Bodies

    @Test(arguments: [HTTPVersionPreference.http1, .http2])
    func aPutOfBytesArrivesByteExactWithoutExpectContinue(version: HTTPVersionPreference) async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        // 3 MiB: above the 1 MiB where libcurl would otherwise send "Expect: 100-continue" and wait.
        let body = Self.bytes(3 << 20, seed: 1)
        let response = try await client.send(
            HTTPRequest(method: "PUT", url: peer.url(peer.plain, "/put"), body: .bytes(body), version: version))
        let echo = try Self.echo(response)
        #expect(response.status == 200)
        #expect(echo.method == "PUT")
        #expect(echo.length == body.count)
        #expect(echo.sha256 == SHA256.hash(body).hex)
        #expect(echo.expect == nil)
        #expect(echo.http_version == (version == .http2 ? "2" : "1.1"))
        #expect(response.telemetry.protocolVersion == (version == .http2 ? .http2 : .http1))
        #expect(response.telemetry.bytesSent == Int64(body.count))
        #expect(response.telemetry.bytesReceived == Int64(response.body.count))
    }

    /// A client with a send cap (`aether upload --max-rate`) sends each body no faster than the cap: 3 MiB at
    /// 2 MiB/s takes at least a second (libcurl averages over the transfer; load only makes it slower), and the
    /// bytes arrive whole. Without the cap the same request goes at loopback speed.
    @Test func aSendCapHoldsEachBodyToItsRate() async throws {
        let peer = try HTTPPeerProcess.get()
        let capped = try HTTPClient(
            configuration: HTTPClientConfiguration(proxy: .none, maximumSendBytesPerSecond: 2 << 20))
        defer { capped.shutDown() }
        let body = Self.bytes(3 << 20, seed: 7)
        let started = ContinuousClock.now
        let response = try await capped.send(
            HTTPRequest(method: "PUT", url: peer.url(peer.plain, "/capped"), body: .bytes(body), timeouts: Self.patient)
        )
        let took = started.duration(to: .now)
        let echo = try Self.echo(response)
        #expect(response.status == 200)
        #expect(echo.sha256 == SHA256.hash(body).hex)
        #expect(took >= .milliseconds(1000), "3 MiB under a 2 MiB/s cap took \(took)")
    }

    @Test(arguments: [
        (HTTPVersionPreference.http1, true), (.http1, false), (.http2, true), (.http2, false),
    ])
    func aPostStreamedFromTheFileReadersChunksArrivesByteExact(version: HTTPVersionPreference, knownLength: Bool)
        async throws
    {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let content = Self.bytes((5 << 20) + 123, seed: 2)
        let file = peer.directory.appendingPathComponent("body-\(UUID().uuidString).bin")
        try Data(content).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let stream = HTTPBodyStream(length: knownLength ? Int64(content.count) : nil, capacity: 2)
        let path = file.path
        // The writer reads 512 KiB chunks into the IO layer's pooled buffers and hands them over as they are.
        let writer = Task {
            let reader = try FileChunkReader(
                path: path, options: ChunkReadOptions(chunkSize: 512 << 10, strategy: .pread, heldChunks: 4))
            while let chunk = try reader.next() { try await stream.write(chunk) }
            stream.finish()
        }
        let response = try await client.send(
            HTTPRequest(
                method: "POST", url: peer.url(peer.plain, "/post"), headers: ["X-Test": "stream"],
                body: .stream(stream), version: version, timeouts: Self.patient))
        try await writer.value
        let echo = try Self.echo(response)
        #expect(echo.method == "POST")
        #expect(echo.length == content.count)
        #expect(echo.sha256 == SHA256.hash(content).hex)
        #expect(echo.x_test == "stream")
        if version == .http1 {
            #expect(echo.transfer_encoding == (knownLength ? nil : "chunked"))
            #expect(echo.content_length == (knownLength ? String(content.count) : nil))
        }
    }

    @Test func aStreamThatEndsShortOrIsAbortedFailsTheRequestWithATypedError() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let short = HTTPBodyStream(length: 100)
        let shortWriter = Task {
            try await short.write([UInt8](repeating: 1, count: 40))
            short.finish()
        }
        let shortError = await #expect(throws: TransportError.self) {
            try await client.send(
                HTTPRequest(
                    method: "PUT", url: peer.url(peer.plain, "/short"), body: .stream(short), timeouts: Self.patient))
        }
        #expect(shortError?.code == .bodySourceFailed)
        try await shortWriter.value

        let aborted = HTTPBodyStream(length: nil)
        let abortWriter = Task {
            try await aborted.write([UInt8](repeating: 2, count: 1000))
            aborted.abort(reason: "the file changed while it was read")
        }
        let abortError = await #expect(throws: TransportError.self) {
            try await client.send(
                HTTPRequest(
                    method: "POST", url: peer.url(peer.plain, "/abort"), body: .stream(aborted), timeouts: Self.patient)
            )
        }
        #expect(abortError?.code == .bodySourceFailed)
        try await abortWriter.value
    }

    @Test func chunksHandedOverWholeAreSentInOrder() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let content = Self.bytes(300_001, seed: 3)
        let file = peer.directory.appendingPathComponent("chunks-\(UUID().uuidString).bin")
        try Data(content).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let reader = try FileChunkReader(
            path: file.path, options: ChunkReadOptions(chunkSize: 65536, strategy: .pread, heldChunks: 8))
        var chunks: [Chunk] = []
        while let chunk = try reader.next() { chunks.append(chunk) }
        let response = try await client.send(
            HTTPRequest(method: "PATCH", url: peer.url(peer.plain, "/patch"), body: .chunks(chunks)))
        let echo = try Self.echo(response)
        #expect(echo.method == "PATCH")
        #expect(echo.sha256 == SHA256.hash(content).hex)
    }

    // MARK: Connections

    @Test func aSecondRequestReusesTheKeptAliveConnection() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let first = try await client.send(HTTPRequest(url: peer.url(peer.plain, "/one"), version: .http1))
        let second = try await client.send(HTTPRequest(url: peer.url(peer.plain, "/two"), version: .http1))
        #expect(!first.telemetry.connectionReused)
        #expect(second.telemetry.connectionReused)
        #expect(try Self.echo(first).client_port == Self.echo(second).client_port)
        #expect(second.telemetry.connect == .zero)
    }

    /// Each new connection asks for the configured TCP congestion control and the telemetry reports the one it ran
    /// on; a name the system does not have leaves its default, and the request still succeeds.
    @Test func eachConnectionRunsOnTheCongestionControlAskedForAndSaysWhich() async throws {
        let peer = try HTTPPeerProcess.get()
        let available = try String(
            contentsOfFile: "/proc/sys/net/ipv4/tcp_available_congestion_control", encoding: .utf8
        )
        .split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let system = try String(contentsOfFile: "/proc/sys/net/ipv4/tcp_congestion_control", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for name in ["reno", "cubic", "bbr"] where available.contains(name) {
            let client = try Self.client(HTTPClientConfiguration(proxy: .none, congestionControl: name))
            defer { client.shutDown() }
            let response = try await client.send(HTTPRequest(url: peer.url(peer.plain, "/cc"), version: .http1))
            #expect(response.status == 200)
            // Root may set any available one; anyone else only those the host allows.
            let allowed =
                getuid() == 0
                || (try? String(
                    contentsOfFile: "/proc/sys/net/ipv4/tcp_allowed_congestion_control", encoding: .utf8))?
                    .split(separator: " ").contains { $0.trimmingCharacters(in: .whitespacesAndNewlines) == name }
                    == true
            #expect(response.telemetry.congestionControl == (allowed ? name : system), "asked \(name)")
        }
        let unknown = try Self.client(HTTPClientConfiguration(proxy: .none, congestionControl: "nosuchcontrol"))
        defer { unknown.shutDown() }
        let response = try await unknown.send(HTTPRequest(url: peer.url(peer.plain, "/cc"), version: .http1))
        #expect(response.status == 200)
        #expect(response.telemetry.congestionControl == system)
        let none = try Self.client(HTTPClientConfiguration(proxy: .none, congestionControl: nil))
        defer { none.shutDown() }
        #expect(
            try await none.send(HTTPRequest(url: peer.url(peer.plain, "/cc"))).telemetry.congestionControl == system)
    }

    /// A connection idle for longer than `idleReuseLimit` is not reused (a server may be closing it just then):
    /// the request after the pause goes on a new connection, one within the limit on the same one.
    @Test func aConnectionIdleLongerThanTheReuseLimitIsNotReused() async throws {
        let peer = try HTTPPeerProcess.get()
        // libcurl counts the idle time in whole seconds (a connection is stale once idle > limit): a 3 s limit keeps
        // a loaded machine's gap between the first two requests inside it, and 7 s of pause is well past it.
        let client = try Self.client(HTTPClientConfiguration(proxy: .none, idleReuseLimit: 3))
        defer { client.shutDown() }
        let first = try await client.send(HTTPRequest(url: peer.url(peer.plain, "/one"), version: .http1))
        let soon = try await client.send(HTTPRequest(url: peer.url(peer.plain, "/two"), version: .http1))
        try await Task.sleep(for: .seconds(7))
        let late = try await client.send(HTTPRequest(url: peer.url(peer.plain, "/three"), version: .http1))
        #expect(soon.telemetry.connectionReused)
        #expect(try Self.echo(first).client_port == Self.echo(soon).client_port)
        #expect(!late.telemetry.connectionReused)
        #expect(try Self.echo(late).client_port != Self.echo(soon).client_port)
    }

    /// Over TLS (ALPN) all requests may start at once: they wait for the one connection (CURLOPT_PIPEWAIT).
    @Test func headDeleteAndAnEmptyPostAreSentAsSuch() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let head = try await client.send(HTTPRequest(method: "HEAD", url: peer.url(peer.plain, "/bytes?n=5000")))
        #expect(head.status == 200)
        #expect(head.headers["Content-Length"] == "5000")
        #expect(head.body.isEmpty)
        let delete = try await client.send(HTTPRequest(method: "DELETE", url: peer.url(peer.plain, "/uploads/9")))
        #expect(try Self.echo(delete).method == "DELETE")
        #expect(try Self.echo(delete).length == 0)
        let post = try await client.send(HTTPRequest(method: "POST", url: peer.url(peer.plain, "/empty")))
        #expect(try Self.echo(post).content_length == "0")
    }

    @Test func concurrentHTTP2RequestsOverTLSShareOneConnection() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client(HTTPClientConfiguration(trustAnchorsFile: peer.path("root.pem"), proxy: .none))
        defer { client.shutDown() }
        let url = peer.url(peer.tls, "/multiplexed", tls: true, host: "localhost")
        let responses = try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
            for index in 0..<16 {
                group.addTask {
                    try await client.send(
                        HTTPRequest(
                            method: "PUT", url: url, body: .bytes(Self.bytes(16 << 10, seed: UInt64(index))),
                            version: .http2))
                }
            }
            var all: [HTTPResponse] = []
            for try await response in group { all.append(response) }
            return all
        }
        let ports = Set(try responses.map { try Self.echo($0).client_port })
        #expect(responses.count == 16)
        #expect(ports.count == 1)
        #expect(responses.allSatisfy { $0.telemetry.protocolVersion == .http2 })
        #expect(responses.filter { !$0.telemetry.connectionReused }.count == 1)
    }

    /// libcurl 7.88.1 cannot reuse an h2c (prior knowledge) connection: each h2c request gets a fresh one, so
    /// requests in a row and at once all succeed.
    @Test func h2cRequestsInARowAndAtOnceAllSucceedOnFreshConnections() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let url = peer.url(peer.plain, "/h2c")
        let first = try await client.send(HTTPRequest(url: url, version: .http2))
        let second = try await client.send(HTTPRequest(url: url, version: .http2))
        #expect(first.telemetry.protocolVersion == .http2)
        #expect(second.telemetry.protocolVersion == .http2)
        #expect(!second.telemetry.connectionReused)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await client.send(HTTPRequest(url: url, version: .http2)).status } }
            var all: [Int] = []
            for try await status in group { all.append(status) }
            return all
        }
        #expect(statuses == [Int](repeating: 200, count: 8))
    }

    /// A complete response sent before the body was read, then the stream reset with NO_ERROR (RFC 9113 section
    /// 8.1; nginx's `return` does this), is the answer. libcurl 7.88 reports the reset as an error.
    @Test(arguments: 0..<3)
    func aCompleteResponseBeforeTheBodyWasReadIsTheAnswer(attempt: Int) async throws {
        let peer = try HTTPPeerProcess.get()
        let nginx = try NginxTestServer.get()
        let client = try Self.client(HTTPClientConfiguration(trustAnchorsFile: peer.path("root.pem"), proxy: .none))
        defer { client.shutDown() }
        let response = try await client.send(
            HTTPRequest(
                method: "PUT", url: "https://localhost:\(nginx.port)/early",
                body: .bytes(Self.bytes(4 << 20, seed: UInt64(attempt))), version: .http2))
        #expect(response.status == 204)
        #expect(response.telemetry.protocolVersion == .http2)
    }

    @Test func aClosedPortIsConnectionRefused() async throws {
        let client = try Self.client()
        defer { client.shutDown() }
        let port = try HTTPPeerProcess.get().closed
        let error = await #expect(throws: TransportError.self) {
            try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/"))
        }
        #expect(error?.code == .connectionRefused)
    }

    @Test func aProxyFromTheConfigurationCarriesTheRequest() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client(HTTPClientConfiguration(proxy: .url("http://127.0.0.1:\(peer.raw)")))
        defer { client.shutDown() }
        // example.invalid never resolves: only the proxy can have answered.
        let response = try await client.send(HTTPRequest(url: "http://example.invalid/through-proxy", version: .http1))
        #expect(String(decoding: response.body, as: UTF8.self) == "http://example.invalid/through-proxy")
    }

    // MARK: Responses

    @Test func informationalResponsesComeBeforeTheFinalOne() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let response = try await client.send(
            HTTPRequest(method: "POST", url: peer.url(peer.raw, "/informational"), body: .bytes(Array("abc".utf8))))
        #expect(response.informational.map(\.status) == [104, 103])
        #expect(response.informational.first?.headers["upload-draft-interop-version"] == "6")
        #expect(response.informational.first?.headers["Location"] == "/uploads/7")
        #expect(response.informational.last?.headers["Link"] == "</style.css>; rel=preload")
        #expect(response.status == 201)
        #expect(response.headers["Upload-Offset"] == "3")
        #expect(response.body == Array("ok".utf8))
    }

    @Test func informationalResponsesOverHTTP2ComeBeforeTheFinalOne() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let response = try await client.send(
            HTTPRequest(
                method: "POST", url: peer.url(peer.h2raw, "/informational"), body: .bytes(Array("abcd".utf8)),
                version: .http2))
        #expect(response.telemetry.protocolVersion == .http2)
        #expect(response.informational.map(\.status) == [104, 103])
        #expect(response.informational.first?.headers["Upload-Draft-Interop-Version"] == "6")
        #expect(response.informational.first?.headers["location"] == "/uploads/7")
        #expect(response.informational.last?.headers["link"] == "</style.css>; rel=preload")
        #expect(response.status == 201)
        #expect(response.headers["Upload-Offset"] == "4")
        #expect(response.body == Array("ok".utf8))
    }

    @Test func aServerClosingMidBodyIsConnectionClosed() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let download = await #expect(throws: TransportError.self) {
            try await client.send(HTTPRequest(url: peer.url(peer.raw, "/close-mid-body")))
        }
        #expect(download?.code == .connectionClosed)
        let upload = await #expect(throws: TransportError.self) {
            try await client.send(
                HTTPRequest(
                    method: "PUT", url: peer.url(peer.raw, "/close-during-upload"),
                    body: .bytes(Self.bytes(16 << 20, seed: 4))))
        }
        #expect(upload?.code == .connectionClosed)
    }

    @Test func hugeOrMalformedHeadersAreTypedErrors() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        // 100 fields of 1 KiB: over the client's 64 KiB limit.
        let many = await #expect(throws: TransportError.self) {
            try await client.send(HTTPRequest(url: peer.url(peer.raw, "/huge-headers?count=100")))
        }
        #expect(many?.code == .headerTooLarge)
        // One 200 KiB line: over libcurl's 100 KiB line limit, before the client sees it.
        let line = await #expect(throws: TransportError.self) {
            try await client.send(HTTPRequest(url: peer.url(peer.raw, "/huge-line?size=204800")))
        }
        #expect(line?.code == .headerTooLarge, "\(line?.description ?? "")")
        let garbage = await #expect(throws: TransportError.self) {
            try await client.send(HTTPRequest(url: peer.url(peer.raw, "/garbage")))
        }
        #expect(garbage?.code == .protocolViolation)
        // Within the limit, the same server's headers arrive whole.
        let fine = try await client.send(HTTPRequest(url: peer.url(peer.raw, "/huge-headers?count=20")))
        #expect(fine.headers.values("X-Filler-19") == [String(repeating: "a", count: 1000)])
    }

    @Test func aResponseBodyOverTheLimitIsRefusedAndOneWithinIsWhole() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let url = peer.url(peer.plain, "/bytes?n=100000")
        let error = await #expect(throws: TransportError.self) {
            try await client.send(HTTPRequest(url: url, responseBodyLimit: 99_999))
        }
        #expect(error?.code == .responseTooLarge)
        let response = try await client.send(HTTPRequest(url: url, responseBodyLimit: 100_000))
        #expect(response.body == (0..<100_000).map { UInt8($0 % 251) })
        #expect(response.telemetry.bytesReceived == 100_000)
    }

    // MARK: Time

    @Test func aSilentServerHitsTheTotalTimeoutAndATrickleTheIdleOne() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let total = await #expect(throws: TransportError.self) {
            try await client.send(
                HTTPRequest(
                    url: peer.url(peer.raw, "/silent?id=timeout-\(UUID().uuidString)"),
                    timeouts: HTTPTimeouts(idle: nil, total: .milliseconds(300))))
        }
        #expect(total?.code == .timedOut)
        let idle = await #expect(throws: TransportError.self) {
            try await client.send(
                HTTPRequest(
                    url: peer.url(peer.raw, "/trickle?id=idle-\(UUID().uuidString)"),
                    timeouts: HTTPTimeouts(idle: .seconds(1), total: .seconds(30))))
        }
        #expect(idle?.code == .timedOut)
    }

    @Test func cancellingTheTaskStopsTheTransferAndClosesItsConnection() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let id = UUID().uuidString
        let url = peer.url(peer.raw, "/silent?id=\(id)")
        // A 30 s total timeout: without cancellation this would end in .timedOut, not .cancelled.
        let task = Task {
            try await client.send(HTTPRequest(url: url, timeouts: HTTPTimeouts(idle: nil, total: .seconds(30))))
        }
        // Cancel once the server holds the request (bounded wait, however loaded the machine is).
        var state = ""
        for _ in 0..<400 where state != "open" {
            let response = try await client.send(HTTPRequest(url: peer.url(peer.raw, "/events?id=\(id)")))
            state = String(decoding: response.body, as: UTF8.self)
            if state != "open" { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(state == "open")
        task.cancel()
        let error = await #expect(throws: TransportError.self) { try await task.value }
        #expect(error?.code == .cancelled)
        // The server sees the connection closed: the transfer really stopped.
        for _ in 0..<400 where state != "closed" {
            let response = try await client.send(HTTPRequest(url: peer.url(peer.raw, "/events?id=\(id)")))
            state = String(decoding: response.body, as: UTF8.self)
            if state != "closed" { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(state == "closed")
    }

    @Test func aRequestFromAnAlreadyCancelledTaskNeverStartsAndAShutDownClientRefuses() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        let url = peer.url(peer.plain, "/never")
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await client.send(HTTPRequest(url: url))
        }
        task.cancel()
        let error = await #expect(throws: TransportError.self) { try await task.value }
        #expect(error?.code == .cancelled)
        client.shutDown()
        let after = await #expect(throws: TransportError.self) { try await client.send(HTTPRequest(url: url)) }
        #expect(after?.code == .cancelled)
    }

    // MARK: TLS

    static func pins(_ file: String, peer: HTTPPeerProcess) throws -> CertificatePinManager {
        let pins = try SPKIPin.pins(certificatesPEM: Array(Data(contentsOf: URL(fileURLWithPath: peer.path(file)))))
        return try CertificatePinManager(
            configuration: PinConfiguration(caPins: Set(pins), issuedAt: Date(timeIntervalSince1970: 1_700_000_000)))
    }

    @Test func tlsWithTheTestRootNegotiatesHTTP2AndReportsTheHandshake() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client(HTTPClientConfiguration(trustAnchorsFile: peer.path("root.pem"), proxy: .none))
        defer { client.shutDown() }
        let response = try await client.send(
            HTTPRequest(url: peer.url(peer.tls, "/secure", tls: true, host: "localhost")))
        #expect(response.status == 200)
        #expect(response.telemetry.protocolVersion == .http2)
        #expect(response.telemetry.tlsHandshake > .zero)
        #expect(try Self.echo(response).http_version == "2")
    }

    @Test func aPinnedIntermediateIsAcceptedAndAnUnpinnedChainRefused() async throws {
        let peer = try HTTPPeerProcess.get()
        let url = peer.url(peer.tls, "/pinned", tls: true, host: "localhost")
        let pinned = try Self.client(
            HTTPClientConfiguration(
                trustAnchorsFile: peer.path("root.pem"), pinning: Self.pins("intermediate.pem", peer: peer),
                proxy: .none))
        defer { pinned.shutDown() }
        let response = try await pinned.send(HTTPRequest(url: url))
        #expect(response.status == 200)

        let wrong = try Self.client(
            HTTPClientConfiguration(
                trustAnchorsFile: peer.path("root.pem"), pinning: Self.pins("other.pem", peer: peer), proxy: .none))
        defer { wrong.shutDown() }
        let error = await #expect(throws: TransportError.self) { try await wrong.send(HTTPRequest(url: url)) }
        #expect(error?.code == .pinMismatch)
    }

    @Test func anExpiredLeafIsRefusedPinnedOrNot() async throws {
        let peer = try HTTPPeerProcess.get()
        let url = peer.url(peer.expired, "/expired", tls: true, host: "localhost")
        for pinning in [nil, try Self.pins("intermediate.pem", peer: peer)] {
            let client = try Self.client(
                HTTPClientConfiguration(trustAnchorsFile: peer.path("root.pem"), pinning: pinning, proxy: .none))
            defer { client.shutDown() }
            let error = await #expect(throws: TransportError.self) { try await client.send(HTTPRequest(url: url)) }
            #expect(error?.code == .certificateRejected)
        }
    }

    @Test func theSystemTrustStoreDoesNotTrustTheTestRoot() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let error = await #expect(throws: TransportError.self) {
            try await client.send(HTTPRequest(url: peer.url(peer.tls, "/", tls: true, host: "localhost")))
        }
        #expect(error?.code == .certificateRejected)
    }

    // MARK: Pre-warming

    @Test func aPrewarmedConnectionCarriesTheFirstRequest() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try Self.client(
            HTTPClientConfiguration(
                trustAnchorsFile: peer.path("root.pem"), pinning: Self.pins("intermediate.pem", peer: peer),
                proxy: .none))
        defer { client.shutDown() }
        let origin = peer.url(peer.tls, "/uploads/1", tls: true, host: "localhost")
        let prewarmer = ConnectionPrewarmer(client: client)
        let report = try await prewarmer.prewarm(origin: origin)
        #expect(report.protocolVersion == .http2)
        #expect(!report.alreadyWarm)
        #expect(report.tlsHandshake > .zero)
        #expect(report.status == 204)
        let response = try await client.send(
            HTTPRequest(method: "PUT", url: origin, body: .bytes(Self.bytes(1000, seed: 5))))
        #expect(response.telemetry.connectionReused)
        #expect(response.telemetry.tlsHandshake == .zero)
        let again = try await prewarmer.prewarm(origin: origin)
        #expect(again.alreadyWarm)
    }
}

@Suite struct HTTPClientEnvironmentProxyTests {
    /// libcurl reads `http_proxy` from the environment by itself. Setting it in this process would send every
    /// concurrent test through it (and setenv races getenv), so the check runs in a child process (an exit test)
    /// that starts its own peer.
    @Test func theStandardProxyVariableIsHonouredAndNoneIgnoresIt() async {
        await #expect(processExitsWith: .success) { () async -> Void in
            guard let peer = try? HTTPPeerProcess.get() else { exit(2) }
            unsafe setenv("http_proxy", "http://127.0.0.1:\(peer.raw)", 1)
            unsafe unsetenv("no_proxy")
            unsafe unsetenv("NO_PROXY")
            let url = "http://example.invalid/from-the-environment"
            guard let client = try? HTTPClient() else { exit(3) }
            guard let response = try? await client.send(HTTPRequest(url: url, version: .http1)),
                String(decoding: response.body, as: UTF8.self) == url
            else { exit(4) }
            // `.none` ignores the variable: example.invalid does not resolve.
            guard let direct = try? HTTPClient(configuration: HTTPClientConfiguration(proxy: .none)) else { exit(5) }
            do {
                _ = try await direct.send(HTTPRequest(url: url, version: .http1))
                exit(6)
            } catch let error as TransportError {
                exit(error.code == .hostNotFound ? 0 : 7)
            } catch {
                exit(8)
            }
        }
    }
}
