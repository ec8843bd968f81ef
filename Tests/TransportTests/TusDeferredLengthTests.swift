import Testing

@testable import AetherTransport

/// A tus server without creation-defer-length cannot take an upload of unknown size: the backend says so before
/// sending anything (`aether upload --follow` turns it into `.followUnsupported`).
@Suite struct TusDeferredLengthTests {
    @Test func aDeferredCreationNeedsTheDeferLengthExtension() async throws {
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        // Port 9 (discard): nothing answers, so a request sent by mistake would fail with another code.
        let info = try TusServerInfo(headers: ["Tus-Version": "1.0.0", "Tus-Extension": "creation,termination"])
        let backend = try TusBackend(creationURL: "http://127.0.0.1:9/files/", client: client, server: info)
        var description = UploadDescription(
            size: 0, layout: try PartLayout(objectSize: 0, preferred: 1 << 20, capabilities: backend.capabilities),
            chainSessionID: "s")
        description.sizeDeferred = true
        do {
            _ = try await backend.create(description)
            Issue.record("a deferred-length creation went to a server without creation-defer-length")
        } catch {
            #expect(error.code == .protocolUnsupported)
            #expect(error.message.contains("creation-defer-length"))
        }
    }
}
