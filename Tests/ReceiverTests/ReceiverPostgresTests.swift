import AetherIO
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// `aether serve --catalog`: the receiver with its catalogue in PostgreSQL and its blobs in `--dir`.
@Suite struct ReceiverPostgresTests {
    @Test func aReceiverOnAPostgresCatalogueTakesAnUploadAndAnswersHealth() async throws {
        let url = try PostgresTestServer.sharedDatabase()
        let fixture = try ReceiverFixture(catalogURL: url)
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.description + "/catalog.sqlite3"))
        #expect(try await fixture.send("GET", "/healthz").status == 200)
        let backend = try await IETFResumableBackend.discover(
            creationURL: fixture.uploadsURL, client: fixture.client, version: .latest)
        let content = ReceiverFixture.bytes(90_000, seed: 15)
        let (upload, receipt) = try await ReceiverFixture.upload(content, partSize: 30_000, backend)
        #expect(try fixture.object(at: upload.location) == content)
        #expect(receipt.serverSHA256 == SHA256.hash(content))
        // The upload is in PostgreSQL: a second catalogue over the same database knows it as complete.
        let id = try UploadID(String(try #require(upload.location.split(separator: "/").last)))
        #expect(try PostgresCatalog(url: url).record(id)?.state == .complete)
    }
}
