import Foundation
import Testing

/// `peers/lying_receiver.py` in one mode: a native receiver on 127.0.0.1 that lies in the way the mode says.
final class LyingReceiver: @unchecked Sendable {
    // @unchecked: set once in init; the peer stops when this object goes (its stdin closes).
    struct Announcement: Decodable { let url: String }

    let url: String
    private let peer: LongRunningPeer

    init(_ mode: String, _ extra: [String] = []) throws {
        let (peer, first) = try LongRunningPeer.start(
            "lying_receiver.py", [mode] + extra, announcing: Announcement.self)
        self.peer = peer
        url = first.url
    }
}

/// `aether upload` against receivers that lie (issue 24): whatever the lie, the upload never exits 0 and never
/// claims a check it did not make; a receipt that differs ends in exit 4 (the verification failure), and so does a
/// receiver that cannot prove it holds the sampled bytes. The honest peer, a receiver of before spot-check version 2
/// and an honest `aether serve` show what is claimed when it is true, and a receiver whose stored bytes were damaged
/// after it acknowledged them is caught by the spot check.
@Suite(.serialized) struct LyingReceiverLiveTests {
    /// Every mode of the lying peer, the arguments after the mode, and the exit the upload must end with.
    static let lies: [(String, [String], Int32)] = [
        ("hashes-only", ["--answer", "old"], 4), ("hashes-only", ["--answer", "forged"], 4),
        ("wrong-root", [], 4), ("wrong-sha256", [], 4), ("wrong-size", [], 4), ("acks-unstored", [], 4),
        ("other-upload", [], 4),
    ]

    /// A file of 16 chunks (the last one short), so the spec's sample is max(ceil(log2 16), ceil(sqrt(1.6))) = 4:
    /// chunks of 64 KiB for the peer, of 256 KiB (its smallest) for `aether serve`.
    static func upload(_ url: String, seed: UInt64, chunk: Int = 64 << 10) throws -> (Int32, UploadChild) {
        let (path, state, _) = try UploadCommandLiveTests.file(Self.size(chunk), seed: seed)
        return try UploadChild.run(Self.arguments(path, url, state, chunk: chunk))
    }

    static func size(_ chunk: Int) -> Int { 15 * chunk + 16960 }

    static func arguments(_ path: String, _ url: String, _ state: String, chunk: Int) -> [String] {
        [
            "upload", path, url + "/uploads", "--state-dir", state, "--json", "--protocol", "native", "--chunk-size",
            "\(chunk >> 10)K",
        ]
    }

    /// The checks the upload claimed (`server_verified` of a `completed` line), nil when it claimed no success.
    static func claims(_ child: UploadChild) -> [String]? {
        child.events.last { $0["event"] as? String == "completed" }.map { $0["server_verified"] as? [String] ?? [] }
    }

    @Test(arguments: lies) func aLyingReceiverNeverGetsASuccessOrAClaimedCheck(
        _ mode: String, _ extra: [String], _ exit: Int32
    ) throws {
        let receiver = try LyingReceiver(mode, extra)
        let (status, child) = try Self.upload(receiver.url, seed: 2400)
        print("lying receiver \(mode) \(extra.joined(separator: " ")): exit \(status)")
        #expect(status != 0, "\(mode): \(child.stdout)")
        #expect(Self.claims(child) == nil, "\(mode) got a success: \(child.stdout)")
        let failed = try #require(child.events.last { $0["event"] as? String == "failed" }, "\(child.stdout)")
        #expect(failed["exit"] as? Int == Int(status))
        #expect(status == exit, "\(mode): \(failed["message"] ?? "")")
    }

    /// Another upload's stored bytes are no answer: the second upload's checks are answered from the first's.
    @Test func answersFromAnotherUploadsBytesFailTheSecondUploadToo() throws {
        let receiver = try LyingReceiver("other-upload")
        let (first, _) = try Self.upload(receiver.url, seed: 2401)
        #expect(first == 4)
        let (second, child) = try Self.upload(receiver.url, seed: 2402)
        #expect(second == 4, "\(child.stdout)")
        #expect(Self.claims(child) == nil)
        let failed = try #require(child.events.last { $0["event"] as? String == "failed" })
        #expect((failed["message"] as? String)?.contains("not the MAC of the bytes sent") == true, "\(failed)")
    }

    /// Answers that are right but later than 500 ms are strikes; the third makes the receiver untrusted.
    @Test func threeLateAnswersMakeTheReceiverUntrusted() throws {
        let receiver = try LyingReceiver("late-answers")
        let (status, child) = try Self.upload(receiver.url, seed: 2407)
        #expect(status == 4, "\(child.stdout)")
        #expect(Self.claims(child) == nil)
        let failed = try #require(child.events.last { $0["event"] as? String == "failed" })
        #expect((failed["message"] as? String)?.contains("failed 3 Byzantine spot checks") == true, "\(failed)")
    }

    /// The peer itself is right: honest, it passes every check, so the failures above are the lies being caught.
    @Test func theHonestPeerPassesAndEveryCheckIsListed() throws {
        let receiver = try LyingReceiver("honest")
        let (status, child) = try Self.upload(receiver.url, seed: 2403)
        #expect(status == 0, "\(child.stdout) \(child.stderr)")
        #expect(Self.claims(child) == ["byzantine-sample", "sha256", "merkle-root", "chain-head"])
        let done = try UploadCommandLiveTests.completed(child)
        let spot = try #require(done["spot_checks"] as? [String: Any])
        #expect(spot["passed"] as? Bool == true && spot["version"] as? Int == 2)
        #expect(spot["sampled"] as? Int == 4 && spot["verified"] as? Int == 4)
    }

    /// A receiver of before version 2 is detected from its capabilities: no check is made, none is claimed, and the
    /// output says why (its data is honest, so the upload itself succeeds).
    @Test func aReceiverOfBeforeVersion2IsNotCheckedAndNothingIsClaimed() throws {
        let receiver = try LyingReceiver("old-receiver")
        let (status, child) = try Self.upload(receiver.url, seed: 2404)
        #expect(status == 0, "\(child.stdout) \(child.stderr)")
        #expect(Self.claims(child) == ["sha256", "merkle-root", "chain-head"])
        let done = try UploadCommandLiveTests.completed(child)
        let spot = try #require(done["spot_checks"] as? [String: Any])
        #expect(spot["passed"] as? Bool == false)
        #expect((spot["not_made"] as? String)?.contains("version 2") == true, "\(spot)")
    }

    @Test func anHonestAetherServePassesTheSpotChecksAndListsThem() throws {
        let receiver = try ReceiverChild()
        let (status, child) = try Self.upload(receiver.url, seed: 2405, chunk: 256 << 10)
        #expect(status == 0, "\(child.stdout) \(child.stderr)")
        #expect(Self.claims(child) == ["byzantine-sample", "sha256", "merkle-root", "chain-head"])
        let done = try UploadCommandLiveTests.completed(child)
        let spot = try #require(done["spot_checks"] as? [String: Any])
        #expect(spot["passed"] as? Bool == true && spot["verified"] as? Int == 4 && spot["strikes"] as? Int == 0)
        let chunk = 256 << 10
        #expect(spot["bytes_checked"] as? Int == 4 * chunk || spot["bytes_checked"] as? Int == 3 * chunk + 16960)
    }

    /// `aether serve` stored and acknowledged every chunk; then a byte of each chunk is flipped in its store file
    /// while the first challenge is held in a relay. The recorded hashes still look right; the MACs over the bytes
    /// do not, and the upload ends in exit 4 without a completion.
    @Test func bytesDamagedOnTheReceiversDiskAfterTheAcknowledgementAreCaught() throws {
        let receiver = try ReceiverChild()
        let relay = try FaultRelay(targetPort: Int(receiver.port))
        try relay.send("hold-on /challenges")
        let chunk = 256 << 10
        let (path, state, _) = try UploadCommandLiveTests.file(Self.size(chunk), seed: 2406)
        let child = try UploadChild(Self.arguments(path, relay.url, state, chunk: chunk))
        try SessionLive.wait("the first challenge to be held", timeout: 60) {
            (try? relay.counters.held) == 1 || !child.process.isRunning
        }
        #expect(try relay.counters.held == 1, "\(child.stdout) \(child.stderr)")
        let streams = receiver.store + "/streams"
        let names = try FileManager.default.contentsOfDirectory(atPath: streams)
        #expect(names.count == 1)
        let handle = try #require(FileHandle(forUpdatingAtPath: streams + "/" + (names.first ?? "")))
        for index in 0..<16 {
            let offset = UInt64(index * chunk + 1000)
            try handle.seek(toOffset: offset)
            let byte = try #require(try handle.read(upToCount: 1)?.first)
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: Data([byte ^ 0xFF]))
        }
        try handle.synchronize()
        try handle.close()
        try relay.send("release")
        let status = try child.wait(timeout: 120)
        #expect(status == 4, "\(child.stdout) \(child.stderr)")
        #expect(Self.claims(child) == nil)
        let failed = try #require(child.events.last { $0["event"] as? String == "failed" })
        #expect((failed["message"] as? String)?.contains("not the MAC of the bytes sent") == true, "\(failed)")
    }
}
