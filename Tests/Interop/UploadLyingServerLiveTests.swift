import AetherIO
import AetherTransport
import Foundation
import Testing

/// `aether upload` (a child process) against servers that lie or stall (issue 24), on 127.0.0.1: the IETF peer's
/// lying modes (`peers/ietf_peer.py`), the tus checksum server's `lengthlie`, answers dripped or 1xx without end,
/// and a connection frozen mid-append by `FaultRelay` in front of the IETF peer and of tuspyserver. Each: never exit
/// 0 on a receipt that does not match (exit 4, at once), never a check claimed that was not made, and the process
/// ends by itself within a bound.
@Suite(.serialized) struct UploadLyingServerLiveTests {
    static func arguments(_ path: String, _ url: String, _ state: String, chunk: String = "64K") -> [String] {
        ["upload", path, url, "--state-dir", state, "--json", "--chunk-size", chunk]
    }

    static func failed(_ child: UploadChild) -> [String: Any]? {
        child.events.last { $0["event"] as? String == "failed" }
    }

    static func tag() -> String { String(UUID().uuidString.prefix(8)).lowercased() }

    /// The requests the IETF peer saw for the upload it created under `mode`.
    static func log(_ peer: IETFPeerProcess, mode: String) async throws -> [IETFLoggedRequest] {
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let all = try await IETFInteropTests.log(peer, client)
        guard let created = all.first(where: { $0.path.hasSuffix(mode) && $0.created != nil })?.created else {
            return []
        }
        return all.filter { $0.path.hasSuffix(created) }
    }

    // MARK: Receipts that do not match: exit 4, at once, and again on the next run

    @Test func anIETFRepresentationDigestOfOtherBytesIsExitFourAndStaysExitFour() async throws {
        let peer = try IETFPeerProcess.get()
        let mode = "wrongdigest-\(Self.tag())"
        let (path, state, _) = try UploadCommandLiveTests.file(300_001, seed: 2401)
        let (status, child) = try UploadChild.run(Self.arguments(path, peer.creationURL(mode), state))
        #expect(status == 4, "\(child.stdout) \(child.stderr)")
        let failed = try #require(Self.failed(child), "\(child.stdout)")
        #expect(failed["exit"] as? Int == 4)
        let message = try #require(failed["message"] as? String)
        #expect(message.contains("Repr-Digest"), "\(message)")
        #expect(message.contains("aether cancel"), "\(message)")
        #expect(!child.events.contains { $0["event"] as? String == "completed" })
        // Final: the completion was not retried (it was, into a HEAD saying complete and an exit 0).
        #expect(!child.events.contains { $0["event"] as? String == "retry" && $0["index"] as? Int == -1 })

        // The same command again: the server now says complete and has no digest to show; the kept state
        // remembers the mismatch, so it is exit 4 again, with no completing request sent.
        let (again, second) = try UploadChild.run(Self.arguments(path, peer.creationURL(mode), state))
        #expect(again == 4, "\(second.stdout) \(second.stderr)")
        let repeated = try #require(Self.failed(second)?["message"] as? String)
        #expect(repeated.contains("earlier run"), "\(repeated)")
        let completions = try await Self.log(peer, mode: mode).filter {
            $0.method == "PATCH" && $0.complete == "?1"
        }
        #expect(completions.count == 1)
    }

    @Test func aCompletionWhoseAnswerIsLostIsNotReportedAsAMatchedDigest() async throws {
        let peer = try IETFPeerProcess.get()
        let (path, state, content) = try UploadCommandLiveTests.file(200_003, seed: 2402)
        let (status, child) = try UploadChild.run(
            Self.arguments(path, peer.creationURL("lostcomplete-\(Self.tag())"), state))
        #expect(status == 0, "\(child.stdout) \(child.stderr)")
        let done = try UploadCommandLiveTests.completed(child)
        #expect((done["server_verified"] as? [String])?.contains("sha256") == false, "\(done)")
        #expect(done["server_unchecked"] as? [String] == ["sha256"], "\(done)")
        #expect((done["unchecked_reason"] as? String)?.contains("already complete") == true)
        let location = try #require(done["location"] as? String)
        #expect(peer.stored(location) == content)

        // With a Repr-Digest on the HEAD answer the same case is checked, and a wrong one is exit 4.
        let (right, rightChild) = try UploadChild.run(
            Self.arguments(path, peer.creationURL("lostcomplete_digest-\(Self.tag())"), state + "-digest"))
        #expect(right == 0, "\(rightChild.stderr)")
        let checked = try UploadCommandLiveTests.completed(rightChild)
        #expect((checked["server_verified"] as? [String])?.contains("sha256") == true, "\(checked)")
        #expect(checked["server_unchecked"] == nil)
        let (wrong, wrongChild) = try UploadChild.run(
            Self.arguments(path, peer.creationURL("lostcomplete_wrong-\(Self.tag())"), state + "-wrong"))
        #expect(wrong == 4, "\(wrongChild.stdout) \(wrongChild.stderr)")
        #expect((Self.failed(wrongChild)?["message"] as? String)?.contains("HEAD answer") == true)
    }

    @Test func aTusServerReportingAnotherLengthAtCompletionIsExitFour() throws {
        let peer = try TusPeerProcess.get()
        let (path, state, _) = try UploadCommandLiveTests.file(150_000, seed: 2403)
        let (status, child) = try UploadChild.run(
            Self.arguments(path, peer.checksumURL("lengthlie"), state) + ["--protocol", "tus"])
        #expect(status == 4, "\(child.stdout) \(child.stderr)")
        let message = try #require(Self.failed(child)?["message"] as? String)
        #expect(message.contains("length of 150007"), "\(message)")
        #expect(!child.events.contains { $0["event"] as? String == "completed" })
    }

    /// The server compares the completing PATCH's Repr-Digest with the bytes it stores and refuses it with 422
    /// (problem digest-mismatch, as `aether serve` answers a stored object that is not the file): final, exit 4 at
    /// once, and again on the next run. It was exit 1, "the server refused the completing PATCH (422)", with the
    /// advice to check the network.
    @Test func anIETFCompletionRefusedForAnotherDigestIsExitFourAndStaysExitFour() async throws {
        let peer = try IETFPeerProcess.get()
        let mode = "refusedigest-\(Self.tag())"
        let (path, state, _) = try UploadCommandLiveTests.file(200_011, seed: 2411)
        let (status, child) = try UploadChild.run(Self.arguments(path, peer.creationURL(mode), state))
        #expect(status == 4, "\(child.stdout) \(child.stderr)")
        let message = try #require(Self.failed(child)?["message"] as? String, "\(child.stdout)")
        #expect(message.contains("Repr-Digest"), "\(message)")
        #expect(message.contains("aether cancel"), "\(message)")
        #expect(!child.events.contains { $0["event"] as? String == "retry" && $0["index"] as? Int == -1 })
        let (again, second) = try UploadChild.run(Self.arguments(path, peer.creationURL(mode), state))
        #expect(again == 4, "\(second.stdout) \(second.stderr)")
        #expect((Self.failed(second)?["message"] as? String)?.contains("earlier run") == true)
        let completions = try await Self.log(peer, mode: mode).filter { $0.method == "PATCH" && $0.complete == "?1" }
        #expect(completions.count == 1)
    }

    /// A server whose disk is full answers 507: not transient, so the upload ends after the first refused request
    /// with exit 1 saying the server has no room (the state kept for a resume), over IETF and tus alike. Both
    /// mapped 507 to a server failure and sent the bytes again 8 times, ending with "check the network".
    @Test(arguments: ["ietf", "tus"])
    func aServerWithNoRoomEndsTheUploadAtOnceSayingSo(protocolName: String) async throws {
        let (path, state, _) = try UploadCommandLiveTests.file(300_007, seed: 2412)
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let status: Int32
        let child: UploadChild
        let patches: Int
        if protocolName == "ietf" {
            let peer = try IETFPeerProcess.get()
            let mode = "full-\(Self.tag())"
            (status, child) = try UploadChild.run(Self.arguments(path, peer.creationURL(mode), state))
            patches = try await Self.log(peer, mode: mode).filter { $0.method == "PATCH" }.count
        } else {
            let peer = try TusPeerProcess.get()
            let before = try await TusInteropTests.log(peer, client).count
            (status, child) = try UploadChild.run(
                Self.arguments(path, peer.checksumURL("full"), state) + ["--protocol", "tus"])
            patches = try await TusInteropTests.log(peer, client).dropFirst(before).filter {
                $0.method == "PATCH" && $0.length > 0
            }.count
        }
        #expect(status == 1, "\(child.stdout) \(child.stderr)")
        let message = try #require(Self.failed(child)?["message"] as? String, "\(child.stdout)")
        #expect(message.contains("no room"), "\(message)")
        #expect(!child.events.contains { $0["event"] as? String == "retry" }, "\(child.stdout)")
        #expect(patches == 1, "\(patches) PATCHes with bytes")
    }

    /// An append damaged on the way is refused with 422 digest-mismatch against its Content-Digest and nothing of
    /// it kept (as `aether serve` does): it is sent again and the upload completes byte-identical. It was
    /// `.remoteRejected`, exit 1 at once, where a native chunk refused the same way is sent again.
    @Test func anIETFAppendDamagedOnTheWayIsSentAgainAndTheUploadCompletes() throws {
        let peer = try IETFPeerProcess.get()
        let (path, state, content) = try UploadCommandLiveTests.file(300_013, seed: 2413)
        let (status, child) = try UploadChild.run(
            Self.arguments(path, peer.creationURL("damaged-\(Self.tag())"), state))
        #expect(status == 0, "\(child.stdout) \(child.stderr)")
        let retry = try #require(child.events.first { $0["event"] as? String == "retry" }, "\(child.stdout)")
        #expect((retry["cause"] as? String)?.contains("checksumMismatch") == true, "\(retry)")
        let location = try #require(try UploadCommandLiveTests.completed(child)["location"] as? String)
        #expect(peer.stored(location) == content)
    }

    // MARK: Answers that drip or never end

    /// The first creation answer's body comes at 1 byte/s: the request is given up at its answer deadline (60 s
    /// after it was sent) and sent again; the upload completes. It used to stay open for as long as the server
    /// liked (1 byte/s met libcurl's low-speed limit).
    @Test func aCreationAnswerDrippedAByteASecondIsAbandonedAndTheUploadCompletes() throws {
        let peer = try IETFPeerProcess.get()
        let (path, state, content) = try UploadCommandLiveTests.file(100_000, seed: 2404)
        let started = Date()
        let child = try UploadChild(Self.arguments(path, peer.creationURL("dripcreate-\(Self.tag())"), state))
        let status = try child.wait(timeout: 300)
        #expect(status == 0, "\(child.stdout) \(child.stderr)")
        let retry = try #require(child.events.first { $0["event"] as? String == "retry" }, "\(child.stdout)")
        #expect((retry["cause"] as? String)?.contains("body did not end") == true, "\(retry)")
        let location = try #require(try UploadCommandLiveTests.completed(child)["location"] as? String)
        #expect(peer.stored(location) == content)
        print("dripped creation answer: exit \(status) after \(Int(Date().timeIntervalSince(started))) s")
    }

    @Test func anAppendAnswerDrippedIsAbandonedAndTheUploadResumesFromTheServersOffset() throws {
        let peer = try IETFPeerProcess.get()
        let (path, state, content) = try UploadCommandLiveTests.file(300_000, seed: 2405)
        let child = try UploadChild(Self.arguments(path, peer.creationURL("drippatch-\(Self.tag())"), state))
        let status = try child.wait(timeout: 300)
        #expect(status == 0, "\(child.stdout) \(child.stderr)")
        let location = try #require(try UploadCommandLiveTests.completed(child)["location"] as? String)
        #expect(peer.stored(location) == content)
    }

    @Test func endlessInformationalAnswersEndTheUploadAtOnceWithATypedError() throws {
        let peer = try IETFPeerProcess.get()
        let (path, state, _) = try UploadCommandLiveTests.file(10_000, seed: 2406)
        let started = Date()
        let child = try UploadChild(Self.arguments(path, peer.creationURL("endless1xx-\(Self.tag())"), state))
        let status = try child.wait(timeout: 120)
        #expect(status == 1, "\(child.stdout) \(child.stderr)")
        let message = try #require(Self.failed(child)?["message"] as? String, "\(child.stdout)")
        #expect(message.contains("informational"), "\(message)")
        #expect(Date().timeIntervalSince(started) < 90)
    }
}

// A connection frozen mid-append (a phone changing network). Each waits out idle limits and a server's lock (one to
// four minutes, mostly asleep), so these are suites of their own: they run beside the lying-server suite, not after it.

/// An IETF append frozen by `FaultRelay` in front of the IETF peer.
@Suite(.serialized) struct FrozenIETFAppendLiveTests {
    /// The relay freezes the first connection after 5 MB without closing it. The client abandons the stalled
    /// append at its idle limit (30 s), asks the server's offset, and while the server still holds the stalled
    /// append (the `hold` mode ends it after 45 s of silence, as the receiver does after 60 s) its 409s at that
    /// same offset are waited out, not counted as the offset changing. It used to fail after ~36 s with "the
    /// server's offset kept changing (4 answers 409)".
    @Test(arguments: ["hold", "normal"])
    func anIETFAppendFrozenMidwayResumesFromTheServersOffset(mode: String) async throws {
        let peer = try IETFPeerProcess.get()
        let relay = try FaultRelay(targetPort: Int(peer.port))
        try relay.send("freeze-after 5000000")
        let (path, state, content) = try UploadCommandLiveTests.file(12 << 20, seed: 2407)
        let url = relay.url + "/create/\(mode)-\(UploadLyingServerLiveTests.tag())"
        let started = Date()
        let child = try UploadChild(UploadLyingServerLiveTests.arguments(path, url, state, chunk: "4M"))
        let status = try await child.exited(timeout: 300)
        #expect(status == 0, "\(child.stdout) \(child.stderr)")
        #expect(try relay.counters.frozen == 1)
        let location = try #require(try UploadCommandLiveTests.completed(child)["location"] as? String)
        #expect(peer.stored(location) == content)
        print("frozen IETF append (\(mode)): exit \(status) after \(Int(Date().timeIntervalSince(started))) s")
    }
}

/// A tus PATCH frozen by `FaultRelay` in front of tuspyserver.
@Suite struct FrozenTusPatchLiveTests {
    /// tuspyserver offers concatenation, so the 4 MiB parts travel as partial uploads in parallel: the relay freezes
    /// the first connection past 3 MB, mid-PATCH of one partial. tuspyserver keeps that PATCH's upload lock for as
    /// long as its connection stays open (here: for ever), answering every later PATCH to it with 503 after 30 s
    /// waiting for the lock. The client gives up on the stalled request at its idle limit, sends the part again with
    /// back-off, and ends within the bound of its attempts, saying that the first attempt stalled and the server
    /// may still hold it; it never hangs and never reports the part stored.
    @Test func aTusPatchFrozenMidwayAtTuspyserverEndsWithinABoundSayingWhatHappened() async throws {
        // Its own tuspyserver: the lock waits below take the server's worker threads, which the shared peer's other
        // uploads need (a kill -9 resume test stalled 60 s on them in CI).
        let peer = try TusPeerProcess.dedicated()
        defer { withExtendedLifetime(peer) {} }
        let relay = try FaultRelay(targetPort: Int(peer.tus))
        try relay.send("freeze-after 3000000")
        let (path, state, _) = try UploadCommandLiveTests.file(12 << 20, seed: 2408)
        let started = Date()
        let child = try UploadChild(
            UploadLyingServerLiveTests.arguments(path, relay.url + "/files/", state, chunk: "4M"))
        // 8 attempts, each answered 503 after tuspyserver's 30 s lock wait, with back-off and breaker pauses.
        let status = try await child.exited(timeout: 600)
        let seconds = Int(Date().timeIntervalSince(started))
        #expect(status == 1, "\(child.stdout) \(child.stderr)")
        #expect(try relay.counters.frozen == 1)
        let message = try #require(UploadLyingServerLiveTests.failed(child)?["message"] as? String, "\(child.stdout)")
        #expect(message.contains("stalled"), "\(message)")
        #expect(message.contains("may still hold that request"), "\(message)")
        #expect(!child.events.contains { $0["event"] as? String == "completed" })
        print("frozen tus PATCH at tuspyserver: exit \(status) after \(seconds) s: \(message)")
    }
}
