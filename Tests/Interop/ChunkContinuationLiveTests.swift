import Foundation
import Testing

/// A native chunk cut part way on the wire between `aether upload` and `aether serve` (`FaultRelay`'s
/// `reset-after`): the receiver keeps the prefix that arrived and the client continues from it (`docs/PROTOCOL.md`
/// 3.2.2) instead of sending the chunk again; the same cut against a receiver that keeps no prefix
/// (`--max-partials 0`) costs the chunk's received bytes again. Re-sent bytes are measured on the wire (the relay's
/// count toward the receiver, less the file).
@Suite(.serialized) struct ChunkContinuationLiveTests {
    static let partSize = 4 << 20
    static let size = 3 * partSize
    /// Where the first connection to carry that much toward the receiver is cut: 3.5 MiB into its first chunk (less
    /// what the requests before it on that connection carried).
    static let cut = 3_670_016

    struct Measured {
        /// Bytes toward the receiver beyond the file's (headers and status requests included).
        let resent: Int64
        /// The client's own count (`bytes_sent`, an upper bound: a cut attempt counts its whole body, the parts after
        /// the cut included).
        let bytesSent: Int
        let partialsKept: Double
        let continuationsStored: Double
    }

    /// Uploads a fresh file through a relay that cuts the first connection after `cut` bytes, to a receiver started
    /// with `extra`; checks that the upload completes verified and byte-identical.
    static func upload(seed: UInt64, extra: [String]) throws -> Measured {
        let receiver = try ReceiverChild(extra: extra)
        let relay = try FaultRelay(targetPort: Int(receiver.port))
        try relay.send("reset-after \(Self.cut)")
        let (path, state, content) = try UploadCommandLiveTests.file(Self.size, seed: seed)
        let child = try UploadChild([
            "upload", path, relay.url + "/uploads", "--state-dir", state, "--json", "--protocol", "native",
            "--part-size", "4M", "--parallel", "1",
        ])
        let status = try child.wait(timeout: 120)
        #expect(status == 0, "\(child.stderr)")
        let counters = try relay.counters
        #expect(counters.resets == 1)
        let done = try UploadCommandLiveTests.completed(child)
        #expect((done["server_verified"] as? [String])?.contains("sha256") == true, "\(done)")
        let location = try #require(done["location"] as? String)
        #expect(try receiver.object(location) == content)
        let metrics = try ReceiverLoadLiveTests.metrics(receiver.url)
        return Measured(
            resent: counters.up - Int64(Self.size), bytesSent: done["bytes_sent"] as? Int ?? -1,
            partialsKept: ReceiverLoadLiveTests.sample(metrics, "aether_chunk_partials_kept_total") ?? -1,
            continuationsStored: ReceiverLoadLiveTests.sample(
                metrics, "aether_chunk_continuations_total{outcome=\"stored\"}") ?? -1)
    }

    @Test func aChunkCutPartWayOnTheWireIsContinuedNotSentAgain() throws {
        let continued = try Self.upload(seed: 951, extra: [])
        // What the cut request delivered stays at the receiver: only headers and the status request go again.
        #expect(continued.resent >= 0)
        #expect(continued.resent < Int64(Self.partSize) / 16, "re-sent \(continued.resent) bytes")
        #expect(continued.partialsKept >= 1)
        #expect(continued.continuationsStored >= 1)

        let whole = try Self.upload(seed: 952, extra: ["--max-partials", "0"])
        // The same cut without a kept prefix: the chunk's received bytes cross again.
        #expect(whole.partialsKept == 0)
        #expect(whole.resent > Int64(Self.cut) - (256 << 10), "re-sent \(whole.resent) bytes")
        // The client's count (each attempt's body whole, the cut one too) differs by the prefix the continuation
        // did not send again.
        #expect(
            whole.bytesSent - continued.bytesSent > Self.cut - (256 << 10),
            "bytes_sent \(continued.bytesSent) continued, \(whole.bytesSent) without")
        print(
            "chunk continuation: cut \(Self.cut) bytes into a connection, \(Self.partSize)-byte chunks: re-sent on the "
                + "wire \(continued.resent) bytes continued, \(whole.resent) without (bytes_sent \(continued.bytesSent) "
                + "and \(whole.bytesSent) for a \(Self.size)-byte file)")
    }
}
