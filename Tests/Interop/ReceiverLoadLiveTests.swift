import AetherIO
import AetherTransport
import Foundation
import Synchronization
import Testing

/// Load on `aether serve` as a process (issue 13): 200 concurrent IETF uploads on loopback complete without an
/// error, every object byte-identical; the receiver's peak RSS (VmHWM) and the p99 chunk latency (client side,
/// and from the receiver's `aether_chunk_seconds` histogram) are reported.
@Suite struct ReceiverLoadLiveTests: SeededContent {
    static let uploads = 200
    static let partSize: Int64 = 16 * 1024

    /// `VmHWM` of process `pid` in KiB.
    static func peakRSS(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try #require(Int(line.split(separator: " ").dropFirst().first ?? ""))
    }

    /// The receiver's `/metrics` text (fetched with curl).
    static func metrics(_ url: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sS", "--noproxy", "*", url + "/metrics"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// The value of the sample `name` (with its labels) in a Prometheus text exposition.
    static func sample(_ text: String, _ name: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            .flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test func twoHundredConcurrentUploadsCompleteWithoutErrorsAndThePeakRSSAndP99AreReported() async throws {
        // 200 uploads from one address: more connections than the default per-client limit.
        let receiver = try ReceiverChild(extra: ["--max-connections-per-client", "0"])
        let url = receiver.url
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let latencies = LatencyLog()
        let results = try await withThrowingTaskGroup(of: (String, [UInt8]).self) { group in
            for index in 0..<Self.uploads {
                group.addTask {
                    let content = Self.bytes(64 * 1024 + index, seed: UInt64(index + 7000))
                    let backend = try await IETFResumableBackend.discover(
                        creationURL: url + "/uploads", client: client, version: .latest)
                    let layout = try PartLayout(
                        objectSize: Int64(content.count), preferred: Self.partSize,
                        capabilities: backend.capabilities, alignment: 1)
                    let remote = try await backend.create(
                        UploadDescription(
                            size: Int64(content.count), layout: layout, contentType: nil, chainSessionID: "load",
                            sha256: SHA256.hash(content)))
                    for part in 0..<layout.partCount {
                        let range = layout.range(ofPart: part)
                        let bytes = Array(content[Int(range.lowerBound)..<Int(range.upperBound)])
                        let started = ContinuousClock.now
                        _ = try await backend.send(
                            UploadPart(
                                index: part, offset: range.lowerBound, body: .bytes(bytes),
                                length: Int64(bytes.count), sha256: SHA256.hash(bytes),
                                crc32c: CRC32C.checksum(bytes)),
                            to: remote)
                        let elapsed = ContinuousClock.now - started
                        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                        latencies.values.withLock { $0.append(seconds) }
                    }
                    _ = try await backend.complete(
                        remote, summary: CompletionSummary(parts: [], fileSHA256: SHA256.hash(content)))
                    return (remote.location, content)
                }
            }
            var all: [(String, [UInt8])] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == Self.uploads)
        #expect(Set(results.map(\.0)).count == Self.uploads)
        for (location, content) in results {
            #expect(try receiver.object(location) == content)
        }
        let text = try Self.metrics(url)
        #expect(Self.sample(text, "aether_uploads_completed_total{protocol=\"ietf\"}") == Double(Self.uploads))
        #expect(Self.sample(text, "aether_uploads_failed_total{protocol=\"ietf\"}") == 0)
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("aether_requests_total{status=\"5") })
        let count = try #require(Self.sample(text, "aether_chunk_seconds_count"))
        #expect(count >= Double(Self.uploads * 5))
        // The receiver's p99: the smallest bucket bound holding 99% of the chunks.
        let receiverP99 = ReceiverMetricsBuckets.bounds.first {
            (Self.sample(text, "aether_chunk_seconds_bucket{le=\"\($0)\"}") ?? 0) >= 0.99 * count
        }
        let sorted = latencies.values.withLock { $0 }.sorted()
        let clientP99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        let rss = try Self.peakRSS(receiver.child.process.processIdentifier)
        print(
            "receiver load: \(Self.uploads) concurrent uploads, \(sorted.count) chunks, peak RSS \(rss / 1024) MiB, "
                + "p99 chunk latency \(String(format: "%.1f", clientP99 * 1000)) ms at the client, "
                + "<= \(receiverP99 ?? "+Inf") s in the receiver's histogram")
    }
}

/// The bucket bounds of `aether_chunk_seconds` as the exposition prints them.
enum ReceiverMetricsBuckets {
    static let bounds = ["0.001", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10"]
}

/// Chunk latencies collected from many tasks.
final class LatencyLog: Sendable {
    let values = Mutex<[Double]>([])
}
