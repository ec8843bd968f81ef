import AetherIO
import AetherTransport
import Foundation
import Testing

/// What Ceph RGW 16.2 does differently from AWS, each seen here against the real server (and against moto where
/// the two differ), and what the S3 client does about it (docs/PROTOCOL.md section 8.5).
@Suite(.serialized) struct S3RGWInteropTests: SeededContent {
    static func client() throws -> HTTPClient { try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none)) }

    static func part(_ bytes: [UInt8], index: Int = 0, sha256: Digest32? = nil, crc32c: UInt32? = nil) -> UploadPart {
        UploadPart(
            index: index, offset: Int64(index) * (5 << 20), body: .bytes(bytes), length: Int64(bytes.count),
            sha256: sha256 ?? SHA256.hash(bytes), crc32c: crc32c ?? CRC32C.checksum(bytes))
    }

    static func multipart(_ backend: S3Backend, size: Int) async throws -> RemoteUpload {
        let layout = try PartLayout(objectSize: Int64(size), preferred: 5 << 20, capabilities: backend.capabilities)
        return try await backend.create(UploadDescription(size: Int64(size), layout: layout, chainSessionID: "rgw"))
    }

    /// RGW 16.2 answers 200 to a part whose `x-amz-checksum-crc32c` is wrong: a client that took the server for
    /// AWS or MinIO would count a check never made. What RGW does check is the signed payload SHA-256, so the Ceph
    /// flavor signs every part (even when asked for unsigned payloads) and sends no CRC32C.
    @Test func rgwIgnoresAWrongCRC32CAndRefusesAWrongSignedSHA256() async throws {
        let peer = try S3Server.rgw.peer()
        let client = try Self.client()
        defer { client.shutDown() }
        let bytes = Self.bytes(5 << 20, seed: 1)
        let key = "rgw/crc-\(UUID().uuidString).bin"
        let asAWS = try S3BackendInteropTests.backend(peer, key: key, client: client, flavor: .aws)
        let upload = try await Self.multipart(asAWS, size: 2 * bytes.count)
        let wrong = CRC32C.checksum(bytes) ^ 0xFFFF_FFFF
        let accepted = try await asAWS.send(Self.part(bytes, crc32c: wrong), to: upload)
        #expect(accepted.entityTag != nil)

        for options in [S3Backend.Options(), S3Backend.Options(payloadSigning: .unsigned)] {
            let asCeph = try S3BackendInteropTests.backend(
                peer, key: key, client: client, options: options, flavor: .ceph)
            let good = try await asCeph.send(Self.part(bytes, index: 1), to: upload)
            #expect(good.checks == [.serverSHA256])
            #expect(good.checksumCRC32C == nil)
            let damaged = SHA256.hash(bytes.reversed())
            let error = await #expect(throws: TransportError.self) {
                _ = try await asCeph.send(Self.part(bytes, index: 1, sha256: damaged), to: upload)
            }
            // XAmzContentSHA256Mismatch: damage in transit, which the uploader sends again.
            #expect(error?.code == .checksumMismatch, "\(String(describing: error))")
        }
        try await asAWS.abort(upload)
    }

    /// A Complete that leaves out a stored part: AWS (and moto) keep the parts named and drop the rest; RGW refuses
    /// the list with 400 InvalidPart. The backend never leaves one out; the object client's caller sees the code.
    @Test(arguments: S3Server.allCases)
    func aCompletionThatLeavesOutAStoredPart(server: S3Server) async throws {
        let peer = try server.peer()
        let client = try Self.client()
        defer { client.shutDown() }
        let objects = try peer.objectClient(client)
        let key = "rgw/left-out-\(UUID().uuidString).bin"
        let first = Self.bytes(5 << 20, seed: 2)
        let upload = try await objects.createMultipartUpload(key)
        let tag = try await objects.uploadPart(key, uploadID: upload, number: 1, bytes: first)
        _ = try await objects.uploadPart(key, uploadID: upload, number: 2, bytes: [1, 2, 3])
        let parts = [S3ObjectClient.CompletedPart(number: 1, entityTag: tag)]
        if server == .rgw {
            let error = await #expect(throws: TransportError.self) {
                try await objects.completeMultipartUpload(key, uploadID: upload, parts: parts)
            }
            #expect(error?.code == .remoteRejected)
            #expect(error?.message.contains("InvalidPart") == true, "\(String(describing: error))")
            try await objects.abortMultipartUpload(key, uploadID: upload)
        } else {
            try await objects.completeMultipartUpload(key, uploadID: upload, parts: parts)
            #expect(try peer.object(key).size == first.count)
        }
    }

    /// RGW, like AWS, refuses a part under 5 MiB but the last at completion (EntityTooSmall); the backend's layout
    /// never makes one: asked for 1 MiB parts, it makes 5 MiB ones, which RGW takes.
    @Test func partsUnderFiveMebibytesAreRefusedAtCompletionAndTheLayoutNeverMakesThem() async throws {
        let peer = try S3Server.rgw.peer()
        let client = try Self.client()
        defer { client.shutDown() }
        let objects = try peer.objectClient(client)
        let key = "rgw/small-\(UUID().uuidString).bin"
        let upload = try await objects.createMultipartUpload(key)
        let one = try await objects.uploadPart(key, uploadID: upload, number: 1, bytes: Self.bytes(1 << 20, seed: 3))
        let two = try await objects.uploadPart(key, uploadID: upload, number: 2, bytes: [9])
        let error = await #expect(throws: TransportError.self) {
            try await objects.completeMultipartUpload(
                key, uploadID: upload,
                parts: [.init(number: 1, entityTag: one), .init(number: 2, entityTag: two)])
        }
        #expect(error?.code == .remoteRejected)
        #expect(error?.message.contains("EntityTooSmall") == true, "\(String(describing: error))")
        try await objects.abortMultipartUpload(key, uploadID: upload)

        let backend = try S3BackendInteropTests.backend(peer, key: key, client: client)
        let content = Self.bytes((5 << 20) + 10, seed: 4)
        let layout = try PartLayout(
            objectSize: Int64(content.count), preferred: 1 << 20, capabilities: backend.capabilities)
        #expect(layout.partSize == 5 << 20)
        let created = try await backend.create(
            UploadDescription(size: Int64(content.count), layout: layout, chainSessionID: "rgw"))
        var receipts: [PartReceipt] = []
        for index in 0..<layout.partCount {
            receipts.append(
                try await backend.send(S3BackendInteropTests.part(index, of: content, layout: layout), to: created))
        }
        _ = try await backend.complete(
            created, summary: CompletionSummary(parts: receipts, fileSHA256: SHA256.hash(content)))
        try S3BackendInteropTests.expectStored(peer, key: key, content: content)
    }

    /// A CRC32C in a trailer (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`, what newer AWS SDKs send by default over TLS)
    /// is refused with 400 by RGW 16.2; the backend sends none (its payload hash is the part's SHA-256).
    @Test func trailingChecksumsAreRefusedByRGW() throws {
        let rgw = try RGWPeer.get()
        let key = "rgw/trailer-\(UUID().uuidString).bin"
        let answer = try rgw.trailerPut(key)
        #expect(answer.status == 400, "\(answer)")
        #expect(try rgw.object(key).missing == true)
    }
}
