import AetherIO
import FoundationEssentials
import Synchronization
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// Receipts that disagree with the client's own computation (issue 24): a native completion receipt or chunk
/// receipt naming other values ends the upload at once in `.verificationFailed` (exit 4) naming what differed, is
/// never retried, and the kept state refuses to complete the upload on a later run; damage the destination caught
/// in transit (`.checksumMismatch`, a 422) is still sent again.
@Suite(.serialized) struct ChunkedUploaderReceiptTests {
    /// Requests seen, by a short name (`complete`, `chunk`).
    final class Requests: Sendable {
        let counts = Mutex<[String: Int]>([:])
        func note(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }
        subscript(_ name: String) -> Int { counts.withLock { $0[name] ?? 0 } }
    }

    static func replacingBody(_ response: HTTPResponse, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(
            status: response.status, headers: response.headers, informational: response.informational, body: body,
            telemetry: response.telemetry)
    }

    /// A receiver whose completion receipt has `change` applied (it answers with values of other bytes).
    static func forgingReceipt(_ requests: Requests, _ change: @escaping @Sendable (inout NativeReceipt) -> Void)
        -> @Sendable (HTTPRequest, HTTPResponse) -> HTTPResponse
    {
        { request, response in
            guard request.method == "POST", request.url.hasSuffix("/complete") else { return response }
            requests.note("complete")
            guard response.status == 200, var receipt = try? NativeReceipt(json: response.body) else { return response }
            change(&receipt)
            return replacingBody(response, receipt.jsonBytes)
        }
    }

    static let other = SHA256.hash(Array("other bytes".utf8))

    @Test(arguments: ["merkleRoot", "fileSHA256", "size", "chainHead"])
    func aNativeReceiptForOtherBytesEndsAtOnceInVerificationFailedNamingWhatDiffered(field: String) async throws {
        let fixture = try NativeUploadFixture(bytes: UploadFixture.seeded(150_000, seed: 41))
        let requests = Requests()
        let backend = try await fixture.backend(
            rewrite: Self.forgingReceipt(requests) { receipt in
                switch field {
                case "merkleRoot": receipt.merkleRoot = Self.other
                case "fileSHA256": receipt.fileSHA256 = Self.other
                case "size": receipt.size -= 1
                default: receipt.chainHead = Self.other
                }
            })
        let log = EventLog()
        let error = await #expect(throws: UploaderError.self) {
            _ = try await fixture.uploader(backend).run { log.record($0) }
        }
        #expect(error?.code == .verificationFailed)
        #expect(error?.message.contains(field) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("receipt") == true)
        // Asked once: a receipt mismatch is final, never retried (it was, 8 times, then exit 1).
        #expect(requests["complete"] == 1)
        #expect(!log.retries.contains { $0.index == -1 })
        let completed = log.events.withLock { events in
            events.contains { if case .completed = $0 { true } else { false } }
        }
        #expect(!completed)

        // The state is kept and remembers the mismatch: the same upload run again fails the same way at once and
        // completes nothing (the receiver's honest answer now would not make the stored object this file's).
        let snapshot = try #require(try fixture.upload.store().load(key: Self.key(fixture)))
        #expect(try ResumeSnapshot.deserialize(snapshot).receiptMismatch?.contains(field) == true)
        let honest = try await fixture.backend()
        let again = await #expect(throws: UploaderError.self) {
            _ = try await fixture.uploader(honest).run { _ in }
        }
        #expect(again?.code == .verificationFailed)
        #expect(again?.message.contains("earlier run") == true)
        #expect(again?.message.contains(field) == true)
        #expect(requests["complete"] == 1)
        #expect(try fixture.upload.store().load(key: Self.key(fixture)) != nil)
    }

    static func key(_ fixture: NativeUploadFixture) -> String {
        SnapshotKey.derive(canonicalPath: FilePath(fixture.upload.file), destination: fixture.destination)
    }

    /// A chunk receipt naming another SHA-256 than the one sent: the receiver says it stored other bytes.
    @Test func aChunkReceiptNamingAnotherSHA256IsFinalNotResent() async throws {
        let fixture = try NativeUploadFixture(bytes: UploadFixture.seeded(150_000, seed: 42))
        let requests = Requests()
        let backend = try await fixture.backend(rewrite: { request, response in
            guard request.method == "PUT", request.url.hasSuffix("/chunks/3") else { return response }
            requests.note("chunk")
            guard let value = response.headers[AetherWire.receiptField],
                var receipt = try? AetherReceiptHeader(parsing: value)
            else { return response }
            receipt.sha256 = Self.other
            var headers = response.headers
            headers.replace(AetherWire.receiptField, receipt.fieldValue)
            return HTTPResponse(
                status: response.status, headers: headers, informational: response.informational,
                body: response.body, telemetry: response.telemetry)
        })
        let error = await #expect(throws: UploaderError.self) {
            _ = try await fixture.uploader(backend).run { _ in }
        }
        #expect(error?.code == .verificationFailed)
        #expect(error?.message.contains("part 3") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("SHA-256") == true)
        #expect(requests["chunk"] == 1)
    }

    /// A resume skips parts the destination lists; where it lists a part with its checksum (S3 ListParts), the
    /// checksum is compared with the file's part as the part's upload answer was: another one is exit 4, never a
    /// skipped check.
    @Test func aHeldPartListedWithAnotherCRC32COnResumeIsVerificationFailed() async throws {
        let content = UploadFixture.seeded(20 * 16_384, seed: 44)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let holder = TaskHolder()
        let backend = InMemoryBackend(reorder: false) { stored in
            if stored == 6 { holder.cancel() }
        }
        _ = await runUntilCancelled(try fixture.uploader(backend, chunkSize: 16_384, parallel: 1), holder: holder)
        backend.state.withLock { $0.listsPartsWithCRC = [2: 0xDEAD_BEEF] }
        let error = await #expect(throws: UploaderError.self) {
            _ = try await fixture.uploader(backend, chunkSize: 16_384, parallel: 1).run { _ in }
        }
        #expect(error?.code == .verificationFailed)
        #expect(error?.message.contains("part 2 with CRC32C deadbeef") == true, "\(error?.message ?? "")")
        // Listed with the right checksums, the same resume completes byte-identical.
        let good = try UploadFixture(bytes: content)
        defer { good.clean() }
        let honest = InMemoryBackend(reorder: false) { stored in
            if stored == 6 { holder.cancel() }
        }
        _ = await runUntilCancelled(try good.uploader(honest, chunkSize: 16_384, parallel: 1), holder: holder)
        honest.state.withLock { $0.listsPartsWithCRC = [:] }
        let outcome = try await good.uploader(honest, chunkSize: 16_384, parallel: 1).run { _ in }
        #expect(honest.object(outcome.receipt.location) == content)
        #expect(outcome.partsSent < 20)
    }

    /// The contrast: damage the destination caught in transit (422 digest-mismatch, `.checksumMismatch`) is sent
    /// again and the upload completes; a `.receiptMismatch` from the same backend ends after one attempt.
    @Test func damageCaughtInTransitIsResentButAReceiptMismatchIsNot() async throws {
        let content = UploadFixture.seeded(100_000, seed: 43)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let backend = InMemoryBackend()
        backend.state.withLock { $0.failures = [.checksumMismatch, .checksumMismatch] }
        let outcome = try await fixture.uploader(backend, parallel: 1).run { _ in }
        #expect(backend.object(outcome.receipt.location) == content)

        let second = try UploadFixture(bytes: content)
        defer { second.clean() }
        let lying = InMemoryBackend()
        lying.state.withLock { $0.failures = [.receiptMismatch] }
        let error = await #expect(throws: UploaderError.self) {
            _ = try await second.uploader(lying, parallel: 1).run { _ in }
        }
        #expect(error?.code == .verificationFailed)
        #expect(lying.state.withLock { $0.sends.count } == 1)
    }
}
