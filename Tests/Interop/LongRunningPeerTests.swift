import Foundation
import Testing

/// The launcher of the long-running Python peers: how it fails when a peer does not start as announced.
@Suite struct LongRunningPeerTests {
    private struct Ports: Decodable { let tus: UInt16 }

    @Test func aPeerThatExitsBeforeItsFirstLineIsAnErrorQuotingItsStderr() throws {
        let error = try #require(throws: PythonPeer.PeerError.self) {
            _ = try LongRunningPeer.start("no_such_peer.py", announcing: Ports.self)
        }
        #expect(error.message.contains("no_such_peer.py exited before it answered"))
        // Python's own words for a missing script, read back from the peer's stderr.
        #expect(error.message.contains("can't open file"))
    }

    @Test func aFirstLineOfAnotherShapeIsAnErrorNamingThePeerAndTheLine() throws {
        let directory = try LongRunningPeer.makeDirectory("ietf-shape")
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = try #require(throws: PythonPeer.PeerError.self) {
            // ietf_peer.py announces {"port": N}, not the tus peer's ports.
            _ = try LongRunningPeer.start("ietf_peer.py", [directory.path], announcing: Ports.self)
        }
        #expect(error.message.contains("ietf_peer.py printed {\"port\": "))
    }

    @Test func aPortThePeerDidNotAnnounceIsAnErrorNamingIt() throws {
        let directory = try LongRunningPeer.makeDirectory("ietf-ports")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, ports) = try LongRunningPeer.startListening("ietf_peer.py", [directory.path])
        #expect(try ports.port("port") > 0)
        let error = try #require(throws: PythonPeer.PeerError.self) { try ports.port("tus") }
        #expect(error.message.contains("ietf_peer.py announced no port \"tus\""))
    }

    @Test func thePeerDirectoryIsNewAndEmpty() throws {
        let first = try LongRunningPeer.makeDirectory("check")
        let second = try LongRunningPeer.makeDirectory("check")
        defer {
            try? FileManager.default.removeItem(at: first)
            try? FileManager.default.removeItem(at: second)
        }
        #expect(first != second)
        #expect(try FileManager.default.contentsOfDirectory(atPath: first.path).isEmpty)
        #expect(first.lastPathComponent.hasPrefix("aether-check-peer-\(ProcessInfo.processInfo.processIdentifier)-"))
    }
}
