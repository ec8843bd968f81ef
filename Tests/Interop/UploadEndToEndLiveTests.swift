import AetherIO
import Foundation
import Testing

/// `aether serve` as a child: a receiver on 127.0.0.1 with a store directory of its own.
final class ReceiverChild: @unchecked Sendable {
    // @unchecked: set once in init, read afterwards; the child is stopped in deinit.
    let child: UploadChild
    let store: String
    let url: String

    /// A receiver on `port` (0: one the kernel picks), on `store` (a fresh directory when nil), with `extra` flags.
    init(port: UInt16 = 0, store given: String? = nil, extra: [String] = []) throws {
        let store = try given ?? SessionLive.temporaryDirectory() + "/store"
        let child = try UploadChild(["serve", "--dir", store, "--port", "\(port)"] + extra)
        var found: String?
        try SessionLive.wait("aether serve to listen", timeout: 30) {
            found = child.stdout.split(separator: "\n").first { $0.hasPrefix("listening on ") }
                .map { String($0.dropFirst("listening on ".count)) }
            return found != nil || !child.process.isRunning
        }
        self.store = store
        self.child = child
        url = try #require(found, "aether serve did not start: \(child.stderr)")
    }

    /// The port it listens on.
    var port: UInt16 { UInt16(url.split(separator: ":").last ?? "") ?? 0 }

    /// The object the receiver stored for the upload at `location`.
    func object(_ location: String) throws -> [UInt8] {
        let id = String(location.split(separator: "/").last ?? "")
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: store + "/objects/" + id)))
    }
}

@Suite(.serialized) struct UploadEndToEndLiveTests: SeededContent {
    @Test func killDashNineMidwayThenTheSameCommandResumesAndTheReceiverVerifiesEverything() throws {
        let receiver = try ReceiverChild()
        let (path, state, content) = try UploadCommandLiveTests.file(24 << 20, seed: 81)
        let arguments = [
            "upload", path, receiver.url + "/uploads", "--state-dir", state, "--json", "--chunk-size", "256K",
            "--parallel", "2",
        ]
        let (killed, first) = try UploadCommandLiveTests.interrupt(arguments, after: 20, with: SIGKILL)
        #expect(killed == SIGKILL || killed == 128 + SIGKILL)
        let acknowledgedBefore = first.events.filter { $0["event"] as? String == "chunk" }.count
        #expect(acknowledgedBefore >= 20 && acknowledgedBefore < 96)

        let (status, second) = try UploadChild.run(arguments)
        #expect(status == 0, "\(second.stderr)")
        let resume = try #require(second.events.first { $0["event"] as? String == "resume" })
        #expect((resume["level"] as? Int ?? 0) >= 2)
        let reused = try #require(resume["reused_parts"] as? Int)
        #expect(reused >= acknowledgedBefore)
        // What the second run sent: only the parts the receiver did not hold (at most those in flight at the kill).
        let sentAgain = second.events.filter { $0["event"] as? String == "chunk" }.count
        #expect(sentAgain == 96 - reused)
        #expect(reused - acknowledgedBefore <= 2)
        let done = try UploadCommandLiveTests.completed(second)
        #expect(done["server_verified"] as? [String] == ["byzantine-sample", "sha256", "merkle-root", "chain-head"])
        let location = try #require(done["location"] as? String)
        #expect(try receiver.object(location) == content)
    }

    @Test func pauseThenAetherResumeByIDFinishesAndCancelForgetsAnUpload() throws {
        let receiver = try ReceiverChild()
        let (path, state, content) = try UploadCommandLiveTests.file(16 << 20, seed: 82)
        let arguments = [
            "upload", path, receiver.url + "/uploads", "--state-dir", state, "--json", "--chunk-size", "256K",
            "--parallel", "1",
        ]
        let (paused, first) = try UploadCommandLiveTests.interrupt(arguments, after: 10, with: SIGINT)
        #expect(paused == 3, "\(first.stderr)")
        let id = try #require(first.events.last?["id"] as? String)
        let (resumed, second) = try UploadChild.run([
            "resume", id, "--state-dir", state, "--json", "--flags", "-byzantine-sampling",
        ])
        #expect(resumed == 0, "\(second.stderr)")
        let completed = try UploadCommandLiveTests.completed(second)
        #expect(completed["server_verified"] as? [String] == ["sha256", "merkle-root", "chain-head"])
        let location = try #require(completed["location"] as? String)
        #expect(try receiver.object(location) == content)

        // The receiver now holds this content: without -dedup the same upload would complete at once by proof of
        // possession, so dedup is switched off to have an upload to pause (the id stays the same).
        let (pausedAgain, third) = try UploadCommandLiveTests.interrupt(
            arguments + ["--flags", "-dedup"], after: 5, with: SIGINT)
        #expect(pausedAgain == 3, "\(third.stderr)")
        let secondID = try #require(third.events.last?["id"] as? String)
        #expect(secondID == id)
        let (cancelled, fourth) = try UploadChild.run(["cancel", id, "--state-dir", state])
        #expect(cancelled == 0, "\(fourth.stderr)")
        #expect(try UploadChild.run(["status", "--state-dir", state]).1.stdout.contains(id) == false)
        #expect(try UploadChild.run(["resume", id, "--state-dir", state]).0 == 1)
    }
}
