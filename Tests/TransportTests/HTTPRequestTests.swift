import Testing

@testable import AetherTransport

@Suite struct HTTPRequestTests {
    @Test(arguments: [
        HTTPRequest(method: "GE T", url: "http://a/"),
        HTTPRequest(method: "", url: "http://a/"),
        HTTPRequest(url: "ftp://a/"),
        HTTPRequest(url: "file:///etc/passwd"),
        HTTPRequest(url: "http://a/with space"),
        HTTPRequest(url: "http://a/\r\nX: 1"),
        HTTPRequest(url: "http://a/", headers: ["X-Bad": "a\r\nInjected: 1"]),
        HTTPRequest(url: "http://a/", headers: ["Bad Name": "x"]),
        HTTPRequest(url: "http://a/", headers: ["": "x"]),
        HTTPRequest(url: "http://a/", requestTarget: ""),
        HTTPRequest(url: "http://a/", requestTarget: "* x"),
        HTTPRequest(url: "http://a/", responseBodyLimit: -1),
    ])
    func requestsLibcurlWouldMisreadAreInvalidArguments(request: HTTPRequest) {
        #expect(throws: TransportError.self) { try request.validate() }
        let error = #expect(throws: TransportError.self) { try request.validate() }
        #expect(error?.code == .invalidArgument)
    }

    @Test func wellFormedRequestsPass() throws {
        try HTTPRequest(url: "HTTPS://example.com/a?b=c", headers: ["X-Empty": "", "Upload-Offset": "0"]).validate()
        try HTTPRequest(method: "OPTIONS", url: "http://127.0.0.1:8080/", requestTarget: "*").validate()
        #expect(HTTPRequest(url: "HTTPS://x/").isTLS)
        #expect(!HTTPRequest(url: "http://x/").isTLS)
    }

    @Test func aClientRefusesAnInvalidRequestBeforeSendingIt() async throws {
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let error = await #expect(throws: TransportError.self) {
            try await client.send(HTTPRequest(url: "gopher://127.0.0.1/"))
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test func headerNamesCompareCaseInsensitivelyAndKeepOrder() {
        var headers: HTTPHeaders = ["Content-Type": "a", "X-One": "1"]
        headers.add("x-one", "2")
        #expect(headers["CONTENT-TYPE"] == "a")
        #expect(headers.values("X-ONE") == ["1", "2"])
        headers.replace("X-One", "3")
        #expect(headers.values("x-one") == ["3"])
        #expect(headers.fields.map(\.name) == ["Content-Type", "X-One"])
        #expect(!HTTPHeaders.equalNames("a", "ab"))
    }

    @Test func timeoutsRoundUpToWhatLibcurlTakes() {
        #expect(HTTPTimeouts.milliseconds(.milliseconds(300)) == 300)
        #expect(HTTPTimeouts.milliseconds(.microseconds(1)) == 1)
        #expect(HTTPTimeouts.milliseconds(.microseconds(1500)) == 2)
        #expect(HTTPTimeouts.milliseconds(.zero) == 1)
        #expect(HTTPTimeouts.milliseconds(.seconds(-5)) == 1)
        #expect(HTTPTimeouts.milliseconds(.seconds(Int64.max)) == Int.max)
        #expect(HTTPTimeouts.seconds(.milliseconds(1001)) == 2)
        #expect(HTTPTimeouts.seconds(.seconds(30)) == 30)
        #expect(HTTPTimeouts.seconds(.milliseconds(1)) == 1)
    }

    @Test func thePrewarmerTalksToTheOriginOfAnyURL() {
        #expect(ConnectionPrewarmer.originURL("https://h:8443/uploads/1?x=y#f") == "https://h:8443/")
        #expect(ConnectionPrewarmer.originURL("https://h") == "https://h/")
        #expect(ConnectionPrewarmer.originURL("http://h?q") == "http://h/")
    }

    @Test func telemetrySplitsLibcurlsCumulativeTimestampsIntoStages() {
        let telemetry = HTTPTelemetry(
            protocolVersion: .http2, nameLookupMicros: 100, connectMicros: 300, tlsMicros: 1300,
            firstByteMicros: 2000, totalMicros: 2500, bytesSent: 10, bytesReceived: 20, headerBytesReceived: 30,
            newConnections: 1)
        #expect(telemetry.nameLookup == .microseconds(100))
        #expect(telemetry.connect == .microseconds(200))
        #expect(telemetry.tlsHandshake == .microseconds(1000))
        #expect(telemetry.firstByte == .microseconds(2000))
        #expect(!telemetry.connectionReused)
        let clear = HTTPTelemetry(
            protocolVersion: .http1, nameLookupMicros: 0, connectMicros: 0, tlsMicros: 0, firstByteMicros: 5,
            totalMicros: 6, bytesSent: 0, bytesReceived: 0, headerBytesReceived: 0, newConnections: 0)
        #expect(clear.tlsHandshake == .zero)
        #expect(clear.connectionReused)
    }

    @Test func libcurlOnThisMachineHasHTTP2() {
        #expect(HTTPClient.supportsHTTP2)
        #expect(HTTPClient.libcurlVersion.first?.isNumber == true)
    }
}
