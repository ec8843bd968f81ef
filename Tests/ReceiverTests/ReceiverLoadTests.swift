import AetherIO
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// Many uploads at once on loopback.
@Suite struct ReceiverLoadTests {
    @Test func twoHundredConcurrentUploadsCompleteByteIdentical() async throws {
        // 200 uploads from one address: more connections than the default per-client limit.
        let fixture = try ReceiverFixture(http: HTTPServerConfiguration(perClientConnectionLimit: 0))
        let count = 200
        let results = try await withThrowingTaskGroup(of: (String, [UInt8]).self) { group in
            for index in 0..<count {
                group.addTask {
                    let content = ReceiverFixture.bytes(48 * 1024 + index, seed: UInt64(index + 1000))
                    if index % 2 == 0 {
                        let backend = try await IETFResumableBackend.discover(
                            creationURL: fixture.uploadsURL, client: fixture.client,
                            version: index % 4 == 0 ? .latest : .draft05)
                        let (upload, _) = try await ReceiverFixture.upload(content, partSize: 16 * 1024, backend)
                        return (upload.location, content)
                    }
                    let backend = try await TusBackend.discover(
                        creationURL: fixture.uploadsURL, client: fixture.client,
                        options: TusBackendOptions(useConcatenation: false))
                    let (_, receipt) = try await ReceiverFixture.upload(
                        content, partSize: 16 * 1024, backend, sha256: false)
                    return (receipt.location, content)
                }
            }
            var all: [(String, [UInt8])] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == count)
        #expect(Set(results.map(\.0)).count == count)
        for (location, content) in results {
            #expect(try fixture.object(at: location) == content)
        }
        let metrics = try await fixture.send("GET", "/metrics")
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains("aether_uploads_completed_total{protocol=\"ietf\"} 100"))
        #expect(text.contains("aether_uploads_completed_total{protocol=\"tus\"} 100"))
    }
}
