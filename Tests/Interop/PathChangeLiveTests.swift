import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The default route moves to another interface mid-upload, in two network namespaces this test creates: the client's
/// reaches the receiver over interface A, then A goes down and the default route is put on B. The connection under
/// way was opened from A's address, so its replies no longer arrive: without the path watch it would stall until its
/// 30 s idle limit. `aether upload` sees the route change on rtnetlink, abandons the request at once, sends it again
/// from B's address and completes byte-identical.
@Suite(.serialized) struct PathChangeLiveTests {
    @Test(
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip"),
            "skipped: network namespaces need root"))
    func theDefaultRouteMovingMidUploadIsSeenAtOnceAndTheUploadCompletesOnTheNewPath() throws {
        let client = try LTETraceLiveTests.Namespace()
        defer { client.delete() }
        let server = try LTETraceLiveTests.Namespace()
        defer { server.delete() }
        let ip = "/usr/sbin/ip"
        let tag = String(UInt32.random(in: 0...0xFFFF), radix: 16)
        // Two veth pairs between the namespaces (created in the client's, one end moved to the server's).
        for (side, subnet) in [("a", 1), ("b", 2)] {
            let near = "c\(side)\(tag)"
            let far = "s\(side)\(tag)"
            try client.run([ip, "link", "add", near, "type", "veth", "peer", "name", far])
            try client.run([ip, "link", "set", far, "netns", server.name])
            try client.run([ip, "addr", "add", "10.71.\(subnet).1/24", "dev", near])
            try client.run([ip, "link", "set", near, "up"])
            try server.run([ip, "addr", "add", "10.71.\(subnet).2/24", "dev", far])
            try server.run([ip, "link", "set", far, "up"])
        }
        try server.run([ip, "addr", "add", "10.71.9.9/32", "dev", "lo"])
        try client.run([ip, "route", "add", "default", "via", "10.71.1.2", "dev", "ca\(tag)"])

        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let token = "path-change-test-token-\(tag)"
        let tokens = directory + "/tokens"
        try Data("test:\(token)\n".utf8).write(to: URL(fileURLWithPath: tokens))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tokens)
        let receiver = try UploadChild(
            ["serve", "--dir", directory + "/store", "--bind", "10.71.9.9", "--port", "0", "--tokens", tokens],
            launcher: server.launcher)
        defer { receiver.signal(SIGKILL) }
        var url: String?
        try SessionLive.wait("aether serve to listen", timeout: 30) {
            url = receiver.stdout.split(separator: "\n").first { $0.hasPrefix("listening on ") }
                .map { String($0.dropFirst("listening on ".count)) }
            return url != nil || !receiver.process.isRunning
        }
        let base = try #require(url, "aether serve did not start: \(receiver.stderr)")

        let content = UploadCommandLiveTests.bytes(12_000_000, seed: 91)
        try Data(content).write(to: URL(fileURLWithPath: directory + "/input.bin"))
        let upload = try UploadChild(
            [
                "upload", directory + "/input.bin", base + "/uploads", "--token", token, "--state-dir",
                directory + "/state", "--json", "--max-rate", "2M",
            ], launcher: client.launcher)
        try SessionLive.wait("the first acknowledged chunk", timeout: 60) {
            upload.events.contains { $0["event"] as? String == "progress" && ($0["acknowledged"] as? Int ?? 0) > 0 }
                || !upload.process.isRunning
        }
        #expect(upload.process.isRunning, "\(upload.stdout) \(upload.stderr)")
        let moved = Date()
        try client.run([ip, "link", "set", "ca\(tag)", "down"])
        try client.run([ip, "route", "add", "default", "via", "10.71.2.2", "dev", "cb\(tag)"])
        try SessionLive.wait("the path event", timeout: 10) {
            upload.events.contains { $0["event"] as? String == "path" } || !upload.process.isRunning
        }
        let seen = Date().timeIntervalSince(moved)
        #expect(try upload.wait(timeout: 120) == 0, "\(upload.stdout) \(upload.stderr)")
        let finished = Date().timeIntervalSince(moved)
        let paths = upload.events.filter { $0["event"] as? String == "path" }
        #expect(!paths.isEmpty, "\(upload.stdout)")
        // Seen within a second of the move (the watch is a thread on the netlink socket), and the rest of the file
        // (at 2 MB/s, about 5 s of it) did not wait out the old connection's 30 s idle limit.
        #expect(seen < 1.5, "the path event came \(seen) s after the move")
        #expect(finished < 25, "the upload ended \(finished) s after the move")
        let abandoned = upload.events.contains {
            $0["event"] as? String == "retry" && ($0["cause"] as? String ?? "").contains("network path changed")
        }
        #expect(abandoned, "\(upload.stdout)")
        let done = try UploadCommandLiveTests.completed(upload)
        let location = try #require(done["location"] as? String)
        let id = String(location.split(separator: "/").last ?? "")
        let stored = try Data(contentsOf: URL(fileURLWithPath: directory + "/store/objects/\(id)"))
        #expect([UInt8](stored) == content)
        print("path change: event after \(seen) s, upload done \(finished) s after the move")
    }
}
