import AetherIO
import AetherSecurity
import Foundation
import Testing

@testable import AetherTransport

/// The Swift client (the in-process `SessionClient` with its reconnect machine, and `aether session
/// connect`) against a host no Swift code wrote: `peers/session_host.py`, written from
/// docs/SECURE-SESSION.md alone. Keys come from the stores `aether session pair` writes. The peer is
/// stopped by `defer` on every path.
@Suite(.serialized) struct SessionPythonHostLiveTests {
    let hostID = HostID()

    /// Whether the client's log holds a slot status listing `key` in `state`.
    static func listed(_ log: ClientEvents, _ key: KeyID, _ state: SlotStatus.State) -> Bool {
        log.all.contains { event in
            guard case .slotStatus(let slots) = event else { return false }
            return slots.entries.contains { $0.keyID == key && $0.state == state }
        }
    }

    @Test func theClientExchangesFiftyRecordsEachWayWithThePythonHostWhichPromotesAndSavesThePendingKey() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        let key = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let peer = try PythonHostProcess(stateDir: stateDir)
        defer { peer.stop() }
        let log = ClientEvents()
        let client = try SessionClient.live(host: peer.address, key: key, log: log)
        defer { client.stop() }

        try client.connect(keyID: key.id, pending: true)
        try SessionLive.wait("the session with the Python host") { log.sessionsUp.count == 1 }
        #expect(log.sessionsUp[0].hostName == "python-host")
        // During a promote the Accept lists the key as pending; the slot status record after the commit
        // lists it as active, and the host saved the promotion in its store (read back by the Swift store).
        try SessionLive.wait("the slot status record listing the key as active") {
            Self.listed(log, key.id, .active)
        }
        #expect(Self.listed(log, key.id, .pending))
        #expect(peer.events("promoted").count == 1)
        let hostItem = try FileKeyStore(directory: stateDir + "/host/keys").load(hostID: hostID)
        #expect(hostItem?.keys.map(\.state) == [.active])

        for i in 0..<50 { try client.send(type: 0x07, bytes: Array("to-python-\(i)".utf8)) }
        try SessionLive.wait("50 echoes from the Python host") { log.records.count >= 50 }
        #expect(Set(log.records) == Set((0..<50).map { "to-python-\($0)" }))
        #expect(log.records.count == 50)
        let received = peer.records
        #expect(received.count == 50)
        #expect(received.allSatisfy { $0.type == 0x07 })

        // Counts are host-wide and include the query itself (docs/SECURE-SESSION.md 5.6).
        try client.queryCounts(id: 42)
        try SessionLive.wait("the counts answer") { log.counts != nil }
        let counts = try #require(log.counts)
        let logged = try #require(peer.events("counts").last)
        #expect(counts.queryID == 42)
        #expect(counts.recordsOpened == UInt64(logged["opened"] as? Int ?? -1))
        #expect(counts.recordsSealed == UInt64(logged["sealed"] as? Int ?? -1))
        #expect(counts.recordsOpened >= 52)  // at least one confirm, 50 records, the query
        #expect(counts.authenticationFailures == 0)

        client.close()
        try SessionLive.wait("the Python host to end the session on the BYE") {
            peer.events("ended").contains { $0["why"] as? String == "bye" }
        }
        #expect(peer.answers("accept") == 1)
    }

    @Test func theHostsKeepAlivesKeepTheSessionForTwoLivenessPeriodsWithoutANewHandshake() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        let key = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let peer = try PythonHostProcess(stateDir: stateDir, livenessMilliseconds: 2_000)
        defer { peer.stop() }
        let log = ClientEvents()
        let client = try SessionClient.live(host: peer.address, key: key, log: log)
        defer { client.stop() }

        try client.connect(keyID: key.id, pending: true)
        try SessionLive.wait("the session") { log.sessionsUp.count == 1 }
        // Nothing but keep-alives for two liveness periods and a half.
        usleep(5_000_000)
        #expect(peer.answers("accept") == 1, "the client handshook again: \(peer.events("answer").count) answers")
        #expect(log.downs == 0)
        #expect(log.sessionsUp.count == 1)
        #expect(peer.events("keepalive_sent").count >= 4)  // every 500 ms
        #expect(peer.events("keepalive_received").count >= 4)  // the client's, every 500 ms
        try client.send(type: 1, bytes: Array("still here".utf8))
        try SessionLive.wait("the echo on the same session") { log.records == ["still here"] }
    }

    @Test func withoutTheHostsKeepAlivesTheClientHandshakesAgainAtEveryLivenessTimeout() throws {
        // The rule the document had left out: a host that only receives keep-alives loses its client.
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        let key = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let peer = try PythonHostProcess(stateDir: stateDir, livenessMilliseconds: 2_000, keepAlive: false)
        defer { peer.stop() }
        let log = ClientEvents()
        let client = try SessionClient.live(host: peer.address, key: key, log: log)
        defer { client.stop() }

        try client.connect(keyID: key.id, pending: true)
        try SessionLive.wait("the session") { log.sessionsUp.count == 1 }
        try SessionLive.wait("a second handshake after the liveness timeout") { peer.answers("accept") >= 2 }
        // The client's events reach the log on its own thread: wait for the down event rather than race it.
        try SessionLive.wait("the client's liveness timeout in its events") {
            log.all.contains { event in
                if case .down(_, .livenessTimeout) = event { return true }
                return false
            }
        }
        #expect(peer.events("keepalive_sent").isEmpty)
        #expect(!peer.events("keepalive_received").isEmpty)
    }

    @Test func theReconnectMachineFindsARestartedPythonHostOnItsOwn() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        let key = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let first = try PythonHostProcess(stateDir: stateDir, livenessMilliseconds: 2_000)
        defer { first.stop() }
        let log = ClientEvents()
        let client = try SessionClient.live(host: first.address, key: key, log: log)
        defer { client.stop() }

        try client.connect(keyID: key.id, pending: true)
        try SessionLive.wait("the session") { log.sessionsUp.count == 1 }
        try client.send(type: 2, bytes: Array("before".utf8))
        try SessionLive.wait("the first host's echo") { log.records == ["before"] }

        // The host goes away without a BYE and comes back on the same port with the same stores.
        first.stop()
        let second = try PythonHostProcess(stateDir: stateDir, port: first.port, livenessMilliseconds: 2_000)
        defer { second.stop() }
        try SessionLive.wait("the client to reconnect to the restarted host", timeout: 20) {
            log.sessionsUp.count == 2
        }
        #expect(
            log.all.contains { event in
                if case .down(_, .livenessTimeout) = event { return true }
                return false
            })
        #expect(log.sessionsUp[1].sessionID != log.sessionsUp[0].sessionID)
        #expect(second.answers("accept") >= 1)
        try client.send(type: 2, bytes: Array("after".utf8))
        try SessionLive.wait("the restarted host's echo") { log.records == ["before", "after"] }
        #expect(second.records.map(\.bytes) == [Array("after".utf8)])
    }

    @Test func theCLISendsEachLineAsOneTypeZeroRecordWithoutItsLineEnding() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        _ = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let peer = try PythonHostProcess(stateDir: stateDir)
        defer { peer.stop() }
        let (status, out, err) = try SessionLive.runAether(
            ["session", "connect", peer.address.description, "--state-dir", stateDir, "--counts"],
            input: "alpha\nbeta\r\n\ngamma")
        #expect(status == 0, "\(err)")
        let received = peer.records
        #expect(received.map(\.type) == [0, 0, 0, 0])
        #expect(received.map(\.bytes) == ["alpha", "beta", "", "gamma"].map { Array($0.utf8) })
        #expect(out.hasPrefix("alpha\nbeta\n\ngamma\n"))
        // The counts line prints exactly what the host sealed.
        let logged = try #require(peer.events("counts").last)
        let expected =
            "counts query=1 sealed=\(logged["sealed"] as? Int ?? -1) opened=\(logged["opened"] as? Int ?? -1) "
            + "auth_failures=0 replays=0 unknown_control=0\n"
        #expect(out.hasSuffix(expected), "\(out)")
        try SessionLive.wait("the BYE at the Python host") {
            peer.events("ended").contains { $0["why"] as? String == "bye" }
        }
    }

    @Test func theCLISendsAndPrintsTheExactBytesOfLinesThatAreNotUTF8() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        _ = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let peer = try PythonHostProcess(stateDir: stateDir)
        defer { peer.stop() }
        // 0xff and 0xfe are never UTF-8; 0xc3 starts a sequence that never ends; a `\r` not before `\n` stays.
        let lines: [[UInt8]] = [[0xff, 0xfe], [0x61, 0xc3, 0x0d, 0x62, 0xff], [0xfe, 0xff]]
        let input = lines[0] + [0x0a] + lines[1] + [0x0d, 0x0a] + lines[2]
        let (status, out, err) = try SessionLive.runAether(
            ["session", "connect", peer.address.description, "--state-dir", stateDir], inputBytes: input)
        #expect(status == 0, "\(err)")
        let received = peer.records
        #expect(received.map(\.type) == [0, 0, 0])
        #expect(received.map(\.bytes) == lines)
        // The host's echoes are printed byte for byte, each with a `\n`.
        #expect(out == lines.flatMap { $0 + [0x0a] }, "\(out)")
    }

    @Test func aNonBlockingStandardInputThatIsMomentarilyEmptyIsNotTheEndOfInput() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        _ = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let peer = try PythonHostProcess(stateDir: stateDir)
        defer { peer.stop() }
        let process = try AetherProcess(
            ["session", "connect", peer.address.description, "--state-dir", stateDir],
            inputBytes: Array("first\n".utf8), keepInputOpen: true, nonBlockingInput: true)
        defer { process.stop() }
        // The first line is in; the pipe is then empty (EAGAIN) until the second line comes.
        try SessionLive.wait("the first line at the Python host") { !peer.records.isEmpty }
        process.writeInput(Array("second\n".utf8))
        process.closeInput()
        let (status, _, err) = try process.waitForBytes(timeout: 20)
        #expect(status == 0, "\(err)")
        #expect(peer.records.map(\.bytes) == [Array("first".utf8), Array("second".utf8)])
    }

    @Test func aLineLongerThanTheLargestRecordIsAnErrorBeforeItIsReadWhole() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        _ = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let peer = try PythonHostProcess(stateDir: stateDir)
        defer { peer.stop() }
        // Fits the pipe's buffer (so the writer never waits on a process that stopped reading).
        let input = [0x6f, 0x6b, 0x0a] + [UInt8](repeating: 0x61, count: SessionWire.maxRecordPlaintext + 2)
        let (status, _, err) = try SessionLive.runAether(
            ["session", "connect", peer.address.description, "--state-dir", stateDir], inputBytes: input)
        #expect(status == 1)
        #expect(err.contains("line 2 of standard input is longer than 65471 bytes"), "\(err)")
        // The line before it went out; nothing of the long line did.
        try SessionLive.wait("the first line at the Python host") { !peer.records.isEmpty }
        #expect(peer.records.map(\.bytes) == [Array("ok".utf8)])
    }

    @Test func theCLIReportsThePythonHostsTombstoneAndPairAgainAndAnUnknownKeyAsTheDocumentSays() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        let kept = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        // Make the first key active on both sides, so the two newer pending keys are tried before it.
        do {
            let peer = try PythonHostProcess(stateDir: stateDir)
            defer { peer.stop() }
            let (status, _, err) = try SessionLive.runAether(
                ["session", "connect", peer.address.description, "--state-dir", stateDir], input: "one\n")
            #expect(status == 0, "\(err)")
        }
        let retired = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let refused = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        #expect(
            try SessionLive.runAether(["session", "retire", "--key-id", retired.id.hex, "--state-dir", stateDir]).0 == 0
        )
        #expect(
            try SessionLive.runAether(["session", "refuse", "--key-id", refused.id.hex, "--state-dir", stateDir]).0 == 0
        )
        let deviceStore = FileKeyStore(directory: stateDir + "/keys")

        do {
            let peer = try PythonHostProcess(stateDir: stateDir)
            defer { peer.stop() }
            let (status, _, err) = try SessionLive.runAether(
                ["session", "connect", peer.address.description, "--state-dir", stateDir], input: "two\n")
            #expect(status == 0, "\(err)")
            #expect(
                err.contains(
                    "the host refused key \(refused.id.hex) (PairAgain): pair again with aether session pair "
                        + "--host-id \(hostID.hex); trying the next key"))
            #expect(err.contains("the host retired key \(retired.id.hex) (tombstone); it was deleted here; trying"))
            #expect(err.contains("session up with \(peer.address) under key \(kept.id.hex)"))
            #expect(peer.answers("tombstone") == 1 && peer.answers("pair-again") == 1)
            let left = try deviceStore.load(hostID: hostID)?.keys.map(\.id) ?? []
            #expect(Set(left) == [kept.id, refused.id])
        }

        // The slot status left the refused key out, so the device holds it as unlisted: it is tried after
        // the active key. With that one retired too, both refusals are reported and the exit status is 1.
        let states = try deviceStore.load(hostID: hostID)?.keys.map { [$0.id: $0.state] } ?? []
        #expect(states.contains([refused.id: .unlisted]) && states.contains([kept.id: .active]))
        #expect(
            try SessionLive.runAether(["session", "retire", "--key-id", kept.id.hex, "--state-dir", stateDir]).0 == 0)
        do {
            let peer = try PythonHostProcess(stateDir: stateDir)
            defer { peer.stop() }
            let (status, _, err) = try SessionLive.runAether(
                ["session", "connect", peer.address.description, "--state-dir", stateDir])
            #expect(status == 1)
            #expect(
                err.contains("the host retired key \(kept.id.hex) (tombstone); it was deleted here; trying the next"))
            #expect(
                err.hasSuffix(
                    "aether session: the host refused key \(refused.id.hex) (PairAgain): pair again with aether "
                        + "session pair --host-id \(hostID.hex)\n"))
            #expect(try deviceStore.load(hostID: hostID)?.keys.map(\.id) == [refused.id])
        }

        // A key the host does not hold gets no answer at all: the CLI reports a timeout.
        let strangerDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: strangerDir) }
        let stranger = try SessionLive.pair(hostID: hostID, stateDir: strangerDir)
        let peer = try PythonHostProcess(stateDir: stateDir)
        defer { peer.stop() }
        let (status, _, err) = try SessionLive.runAether(
            ["session", "connect", peer.address.description, "--state-dir", strangerDir, "--timeout-ms", "1500"])
        #expect(status == 1)
        #expect(err.contains("aether session: timed out: no session with \(peer.address) within 1500 ms"))
        #expect(peer.events("dropped").contains { $0["key_id"] as? String == stranger.id.hex })
        #expect(peer.events("answer").isEmpty)
    }
}
