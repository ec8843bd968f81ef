import AetherIO
import AetherTestSupport
import AetherTransport
import Foundation
import Testing

/// The shared nginx launcher (`NginxProcess`, used by `aether-bench transport|receiver` and `NginxTestServer`) and
/// the `/proc/PID/stat` CPU reading the receiver bench reports.
@Suite struct NginxProcessTests {
    @Test func theStatLineGivesUserPlusSystemTicksCountedAfterTheLastParenthesis() {
        // Fields 14 (utime) and 15 (stime) after a command name holding spaces and a ")".
        let line = "4242 (ng inx) x) S 1 4242 4242 0 -1 4194560 120 0 0 0 250 75 0 0 20 0 1 0 99 1000 50\n"
        #expect(ProcessCPU.parse(statLine: line, ticksPerSecond: 100) == 3.25)
        #expect(ProcessCPU.parse(statLine: line, ticksPerSecond: 50) == 6.5)
    }

    @Test(arguments: ["", "4242 nginx S 1 2 3", "4242 (nginx) S 1 4242 4242 0 -1 4194560 120 0 0 0 x 75", "(a) S"])
    func aMalformedStatLineGivesNil(line: String) {
        #expect(ProcessCPU.parse(statLine: line, ticksPerSecond: 100) == nil)
    }

    @Test func aZeroTickRateGivesNil() {
        let line = "1 (a) S 1 1 1 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 9 1 1"
        #expect(ProcessCPU.parse(statLine: line, ticksPerSecond: 0) == nil)
    }

    @Test func thisProcessHasUsedSomeCPU() throws {
        let seconds = try #require(ProcessCPU.seconds(processID: getpid()))
        #expect(seconds > 0)
    }

    @Test func aWebDAVPutLandsByteIdenticalAndStopEndsTheProcess() async throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/root", withIntermediateDirectories: true)
        let nginx = try NginxProcess(directory: directory + "/nginx", seed: 41_000) { ports in
            """
                client_max_body_size 0;
                server {
                    listen 127.0.0.1:\(ports[0]);
                    root \(directory)/root;
                    location / { dav_methods PUT; }
                }
            """
        }
        defer { nginx.stop() }
        // A second launcher at the same time gets other ports.
        let other = try NginxProcess(directory: directory + "/other", portCount: 2, seed: 41_000) { ports in
            "server { listen 127.0.0.1:\(ports[0]); listen 127.0.0.1:\(ports[1]); location / { return 204; } }"
        }
        defer { other.stop() }
        #expect(other.ports.count == 2 && other.ports[1] == other.ports[0] + 1)
        #expect(!other.ports.contains(nginx.port))
        #expect(other.processID != nginx.processID)

        let body = SecureRandom.bytes(3 << 20)
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let response = try await client.send(
            HTTPRequest(
                method: "PUT", url: "http://127.0.0.1:\(nginx.port)/a.bin", body: .bytes(body), version: .http1))
        #expect(response.status == 201)
        let stored = try Data(contentsOf: URL(fileURLWithPath: directory + "/root/a.bin"))
        #expect([UInt8](stored) == body)
        #expect(nginx.cpuSeconds() != nil)

        other.stop()
        #expect(other.cpuSeconds() == nil)
        await #expect(throws: TransportError.self) {
            _ = try await client.send(
                HTTPRequest(method: "GET", url: "http://127.0.0.1:\(other.port)/", version: .http1))
        }
    }
}
