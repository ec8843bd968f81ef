import Foundation
import Testing

@testable import AetherReceiver

/// The request log: what a client sends (method, path) never forges a line or reaches a terminal raw.
@Suite struct RequestLogTests {
    /// Bytes no log line may carry from a client: C0 controls (line feed, escape), DEL and C1 (CSI).
    static func hasControl(_ line: String) -> Bool {
        line.dropLast().unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    @Test(arguments: RequestLog.Format.allCases)
    func controlCharactersOfTheMethodAreReplacedAsThePathsAre(_ format: RequestLog.Format) throws {
        let lines = LogLines()
        let log = RequestLog(format: format, sink: { lines.append($0) })
        log.request(
            RequestLog.Entry(
                method: "PA\u{1B}[31mTCH\r\n200 forged\u{7F}\u{9B}", route: "/uploads\u{1B}x\n", status: 204, bytes: 3,
                milliseconds: 1, uploadID: nil, client: "alice"))
        let line = try #require(lines.all.first)
        #expect(lines.all.count == 1)
        #expect(line.hasSuffix("\n"))
        #expect(!Self.hasControl(line), "\(line.debugDescription)")
        switch format {
        case .text:
            #expect(line.hasPrefix("PA?[31mTCH??200 forged?? /uploads?x? 204 3B"))
        case .json:
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["method"] as? String == "PA?[31mTCH??200 forged??")
            #expect(object["route"] as? String == "/uploads?x?")
        }
    }

    @Test(arguments: RequestLog.Format.allCases)
    func aMethodWithControlBytesOnTheWireIsLoggedEscaped(_ format: RequestLog.Format) throws {
        let fixture = try ReceiverFixture(logFormat: format)
        let connection = try RawHTTPConnection(port: fixture.server.http.port)
        connection.send(
            Array("G".utf8) + [0x1B]
                + Array("[2JE\u{7F}T /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".utf8))
        _ = connection.receiveAll()
        connection.close()
        var waited = 0
        while fixture.log.all.isEmpty, waited < 500 {
            usleep(10_000)
            waited += 1
        }
        let line = try #require(fixture.log.all.first { $0.contains("healthz") })
        #expect(!Self.hasControl(line), "\(line.debugDescription)")
        #expect(line.contains("G?[2JE?T"))
    }
}
