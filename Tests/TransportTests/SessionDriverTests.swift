import AetherIO
import AetherSecurity
import AetherTestSupport
import Synchronization
import Testing

@testable import AetherTransport

/// The client and host drivers with their real handshake and records, on loopback sockets, stepped by
/// hand with a manual clock: every datagram is read by the test and handed to the other side.
@Suite struct SessionDriverTests {
    let clock = ManualClock(wall: .milliseconds(1_750_000_000_000), monotonic: .milliseconds(1_000))
    let keyID = KeyID()
    let psk = SymmetricKey(size: .bits256)
    let device = HostID()

    final class Events: Sendable {
        let client = Mutex<[SessionClient.Event]>([])
        let host = Mutex<[SessionHost.Event]>([])
    }

    struct Pair {
        let host: SessionHost
        let client: SessionClient
        let hostSocket: UDPSocket
        let clientSocket: UDPSocket
        let events: Events

        /// The next datagram that reached `socket` (waits at most a second; loopback delivers at once).
        func next(_ socket: UDPSocket) throws -> [UInt8] {
            guard let (bytes, _) = try socket.receive(timeoutMilliseconds: 1_000) else {
                throw TransportError(.timedOut, "no datagram")
            }
            return bytes
        }

        func toHost() throws -> [UInt8] {
            let bytes = try next(hostSocket)
            host.handle(bytes, from: clientSocket.localAddress)
            return bytes
        }

        func toClient() throws -> [UInt8] {
            let bytes = try next(clientSocket)
            client.handle(bytes)
            return bytes
        }
    }

    func makePair(state: SessionTableStateMachine.KeyState = .active) throws -> Pair {
        let hostSocket = try UDPSocket(binding: .loopback(port: 0))
        let clientSocket = try UDPSocket(binding: .loopback(port: 0))
        let events = Events()
        let host = SessionHost(
            socket: hostSocket,
            keys: [SessionHost.HostKey(entry: .init(keyID: keyID, device: device, state: state), psk: psk)],
            clock: clock
        ) { event in events.host.withLock { $0.append(event) } }
        let client = SessionClient(
            socket: clientSocket, host: hostSocket.localAddress, keys: [keyID: psk], clock: clock
        ) { event in events.client.withLock { $0.append(event) } }
        return Pair(host: host, client: client, hostSocket: hostSocket, clientSocket: clientSocket, events: events)
    }

    @Test func aResentMessage1IsIdenticalAndAnsweredFromTheCacheWithoutANewAttempt() throws {
        let p = try makePair()
        try p.client.connect(keyID: keyID, pending: false)
        let first = try p.next(p.hostSocket)
        #expect(first.count == 110)
        clock.advance(by: .milliseconds(250))
        p.client.fireTimerIfDue()
        let resent = try p.next(p.hostSocket)
        #expect(resent == first)
        p.host.handle(first, from: p.clientSocket.localAddress)
        let answer = try p.next(p.clientSocket)
        p.host.handle(resent, from: p.clientSocket.localAddress)
        let again = try p.next(p.clientSocket)
        #expect(again == answer)
        #expect(p.host.pendingCount == 1)
        // The client takes the answer, confirms, and the host's slot status makes the session live.
        p.client.handle(answer)
        _ = try p.toHost()
        _ = try p.toClient()
        #expect(p.client.liveSession != nil)
        #expect(p.host.liveSessions == [p.client.liveSession?.sessionID])
        // The duplicate answer changes nothing on the client.
        p.client.handle(again)
        #expect(p.client.liveSession?.sessionID == p.host.liveSessions.first)
    }

    @Test func recordsFlowBothWaysAndAReplayedRecordIsRejectedByTheHost() throws {
        let p = try makePair()
        try p.client.connect(keyID: keyID, pending: false)
        _ = try p.toHost()
        _ = try p.toClient()
        _ = try p.toHost()  // confirm
        _ = try p.toClient()  // slot status
        let session = try #require(p.client.liveSession)
        try p.client.send(type: 9, bytes: [1, 2, 3])
        let record = try p.toHost()
        p.host.handle(record, from: p.clientSocket.localAddress)
        #expect(p.host.counts.replaysRejected == 1)
        let delivered = p.events.host.withLock { events in
            events.filter { if case .record = $0 { true } else { false } }.count
        }
        #expect(delivered == 1)
        try p.host.send(sessionID: session.sessionID, type: 4, bytes: [7])
        _ = try p.toClient()
        #expect(p.events.client.withLock { $0.contains { if case .record(4, [7]) = $0 { true } else { false } } })
    }

    @Test func aTamperedMessage2ChangesNothingAndTheRealOneStillCompletes() throws {
        let p = try makePair()
        try p.client.connect(keyID: keyID, pending: false)
        _ = try p.toHost()
        var answer = try p.next(p.clientSocket)
        let real = answer
        answer[answer.count - 1] ^= 1
        p.client.handle(answer)
        #expect(p.client.liveSession == nil)
        p.client.handle(real)
        _ = try p.toHost()
        _ = try p.toClient()
        #expect(p.client.liveSession != nil)
    }

    @Test func anUnknownKeyGetsNoAnswer() throws {
        let p = try makePair()
        let stranger = SessionClient(
            socket: p.clientSocket, host: p.hostSocket.localAddress, keys: [KeyID(): SymmetricKey(size: .bits256)],
            clock: clock
        ) { _ in }
        let strangerKey = try #require(stranger.knownKeys.first)
        try stranger.connect(keyID: strangerKey, pending: false)
        _ = try p.toHost()
        #expect(try p.clientSocket.receive(timeoutMilliseconds: 50) == nil)
        #expect(p.host.pendingCount == 0)
    }
}
