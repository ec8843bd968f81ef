import AetherIO
import AetherTransport
import Foundation
import Testing

/// The answer's deadlines of the HTTP client (issue 24) against the raw peer of `peers/http_peer.py`: an answer
/// dripped a byte at a time (its head or its body) and 1xx answers without end end in a typed error within a bound
/// instead of holding the request (libcurl's low-speed limit of 1 byte/s never fires on a drip), while a body the
/// server reads slowly is not cut: the deadlines count from when the request has left this host.
@Suite struct HTTPClientDeadlineInteropTests {
    /// Short deadlines, so each case ends in seconds; the peer drips for two minutes.
    static let short = HTTPTimeouts(idle: .seconds(30), firstByte: .seconds(2), answer: .seconds(3))

    static func failure(_ path: String, method: String = "GET", timeouts: HTTPTimeouts = short) async throws
        -> (error: TransportError?, seconds: Double)
    {
        let peer = try HTTPPeerProcess.get()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let started = ContinuousClock.now
        do {
            let response = try await client.send(
                HTTPRequest(method: method, url: peer.url(peer.raw, path), timeouts: timeouts))
            Issue.record("\(path) was answered \(response.status)")
            return (nil, started.duration(to: .now) / .seconds(1))
        } catch {
            return (error, started.duration(to: .now) / .seconds(1))
        }
    }

    @Test func aHeadDrippedAByteAtATimeTimesOutAtTheAnswerDeadline() async throws {
        let (error, seconds) = try await Self.failure("/drip-head?every=0.5", method: "POST")
        #expect(error?.code == .timedOut)
        #expect(error?.message.contains("head did not end within 3 s") == true, "\(error?.message ?? "")")
        // Generous: the peer drips for 120 s; the deadline is 3 s, checked at least once a second.
        #expect(seconds < 60, "\(seconds) s")
    }

    @Test func aBodyDrippedAByteAtATimeTimesOutAtTheAnswerDeadline() async throws {
        let (error, seconds) = try await Self.failure("/drip-body?every=0.5")
        #expect(error?.code == .timedOut)
        // 100,000 bytes declared, given time at 4 KiB/s: 3 + 24.4 s.
        #expect(error?.message.contains("body did not end") == true, "\(error?.message ?? "")")
        #expect(seconds < 90, "\(seconds) s")
    }

    @Test func endlessInformationalAnswersAreRefusedFastOrSlow() async throws {
        let (fast, fastSeconds) = try await Self.failure("/endless-1xx?every=0")
        #expect(fast?.code == .protocolViolation)
        #expect(fast?.message.contains("informational") == true, "\(fast?.message ?? "")")
        #expect(fastSeconds < 30)
        let (slow, slowSeconds) = try await Self.failure("/endless-1xx?every=0.5")
        #expect(slow?.code == .timedOut)
        #expect(slow?.message.contains("informational 1xx answers") == true, "\(slow?.message ?? "")")
        #expect(slowSeconds < 60)
    }

    /// 8 MiB read at 512 KiB/s: 16 s of sending, most of it after libcurl has taken the whole body (it waits in this
    /// host's send queue). The first-byte and answer deadlines (2 s, 3 s) count from when the queue is empty, so
    /// the prompt answer arrives in time.
    @Test func aBodyTheServerReadsSlowlyIsNotCutByTheAnswerDeadline() async throws {
        let peer = try HTTPPeerProcess.get()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let body = [UInt8](repeating: 0x61, count: 8 << 20)
        let started = ContinuousClock.now
        let response = try await client.send(
            HTTPRequest(
                method: "PUT", url: peer.url(peer.raw, "/slow-read?rate=524288"), body: .bytes(body),
                timeouts: Self.short))
        #expect(response.status == 200)
        #expect(response.body == Array("ok".utf8))
        #expect(started.duration(to: .now) > .seconds(4))
    }
}
