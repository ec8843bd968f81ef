import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// `GET /uploads/{id}/capture` (`docs/PROTOCOL.md` 3.11): a capture manifest stored as an upload is checked against
/// what the receiver holds on every request and served back with its root; a file the receiver no longer holds, a
/// manifest whose line differs from a receipt, and an upload that is no manifest are 409 `capture-mismatch`.
@Suite struct ReceiverCaptureResourceTests {
    /// Stores `files` and a manifest of them (one batch each); the manifest, its upload's location and the files'.
    static func store(_ backend: NativeBackend, _ files: [(path: String, bytes: [UInt8])], damage: Bool = false)
        async throws -> (manifest: CaptureManifest, location: String, locations: [String])
    {
        let sent = files.map { NativeBatchFile(bytes: $0.bytes) }
        var locations: [String] = []
        for outcome in try await backend.send(batch: sent) {
            guard case .stored(let upload, _) = outcome else { throw TransportError(.remoteRejected, "not stored") }
            locations.append(upload.location)
        }
        var entries: [CaptureManifest.Entry] = []
        var tree = StreamingMerkleTree()
        for (index, file) in files.enumerated() {
            let size = Int64(file.bytes.count) + (damage && index == 1 ? 1 : 0)
            entries.append(
                CaptureManifest.Entry(
                    path: file.path, size: size, sha256: sent[index].sha256.hex,
                    merkleRoot: sent[index].merkleRoot.hex, location: locations[index]))
            try tree.append(
                CaptureManifest.leaf(
                    Array(file.path.utf8), size: size, sha256: sent[index].sha256, merkleRoot: sent[index].merkleRoot))
        }
        let manifest = CaptureManifest(sortedFiles: entries, root: tree.root)
        guard
            case .stored(let upload, _) = try await backend.send(batch: [NativeBatchFile(bytes: manifest.jsonBytes)])[0]
        else { throw TransportError(.remoteRejected, "the manifest was not stored") }
        return (manifest, upload.location, locations)
    }

    static let files = [
        ("a/0.bin", ReceiverFixture.bytes(3000, seed: 1)), ("a/1.bin", ReceiverFixture.bytes(4000, seed: 2)),
        ("b.bin", ReceiverFixture.bytes(5000, seed: 3)),
    ]

    @Test func aCaptureTheReceiverHoldsIsServedWithItsRoot() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await NativeBackend.discover(creationURL: fixture.uploadsURL, client: fixture.client)
        let (manifest, location, _) = try await Self.store(backend, Self.files)
        let response = try await fixture.send("GET", location + "/capture")
        #expect(response.status == 200)
        #expect(response.body == manifest.jsonBytes)
        #expect(response.headers["Aether-Capture-Root"] == manifest.root.hex)
        let served = try #require(try await backend.capture(at: location))
        #expect(served.root == manifest.root.hex)
    }

    @Test func aFileNoLongerHeldOrADifferingLineIsACaptureMismatch() async throws {
        let fixture = try ReceiverFixture()
        let backend = try await NativeBackend.discover(creationURL: fixture.uploadsURL, client: fixture.client)
        // A manifest whose second line names another size than the receipt of its upload.
        let (_, damaged, _) = try await Self.store(backend, Self.files, damage: true)
        let differs = try await fixture.send("GET", damaged + "/capture")
        #expect(differs.status == 409)
        #expect(try ReceiverFixture.problem(differs).name == "capture-mismatch")
        // A file's upload cancelled after the manifest was stored.
        let (_, location, locations) = try await Self.store(backend, Self.files)
        let cancelled = try await fixture.send("DELETE", locations[2], headers: [("Aether-Protocol", "1")])
        #expect(cancelled.status == 204)
        let gone = try await fixture.send("GET", location + "/capture")
        #expect(gone.status == 409)
        await #expect(throws: TransportError.self) { _ = try await backend.capture(at: location) }
        // An upload that is no manifest.
        let notManifest = try await fixture.send("GET", locations[0] + "/capture")
        #expect(notManifest.status == 409)
    }
}
