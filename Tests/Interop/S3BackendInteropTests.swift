import AetherIO
import AetherTransport
import Foundation
import Testing

/// The S3 multipart backend against Ceph RGW (`RGWPeer`) and moto (`peers/s3_peer.py`), SigV4 checked by both,
/// content checked by downloading with boto3, CRC32C checked against the PyPI `crc32c` package. The differences of
/// RGW 16.2 from AWS each have a case in `S3RGWInteropTests`.
@Suite(.serialized) struct S3BackendInteropTests: SeededContent {
    static let mebibyte = 1 << 20

    static func backend(
        _ peer: S3TestPeer, key: String, secret: String? = nil, client: HTTPClient,
        options: S3Backend.Options = S3Backend.Options(), flavor: S3Flavor? = nil
    ) throws -> S3Backend {
        try S3Backend(
            destination: S3Destination(parsing: "s3://\(peer.bucket)/\(key)"),
            endpoint: S3Endpoint(url: peer.endpoint, region: "us-east-1"), flavor: flavor ?? peer.flavor,
            credentials: S3Credentials(accessKeyID: peer.accessKeyID, secretAccessKey: secret ?? peer.secretAccessKey),
            client: client, options: options)
    }

    static func description(_ size: Int, partSize: Int64 = 5 << 20, backend: S3Backend) throws -> UploadDescription {
        let layout = try PartLayout(objectSize: Int64(size), preferred: partSize, capabilities: backend.capabilities)
        return UploadDescription(
            size: Int64(size), layout: layout, contentType: "application/octet-stream",
            metadata: ["origin": "aether-test"], chainSessionID: "s3-test")
    }

    static func part(_ index: Int, of content: [UInt8], layout: PartLayout) -> UploadPart {
        let range = layout.range(ofPart: index)
        let slice = Array(content[Int(range.lowerBound)..<Int(range.upperBound)])
        return UploadPart(
            index: index, offset: range.lowerBound, body: .bytes(slice), length: Int64(slice.count),
            sha256: SHA256.hash(slice), crc32c: CRC32C.checksum(slice))
    }

    /// Sends every part of `content` in order; their receipts.
    static func sendAll(
        _ content: [UInt8], layout: PartLayout, backend: S3Backend, upload: RemoteUpload
    ) async throws -> [PartReceipt] {
        var receipts: [PartReceipt] = []
        for index in 0..<layout.partCount {
            receipts.append(try await backend.send(Self.part(index, of: content, layout: layout), to: upload))
        }
        return receipts
    }

    static func expectStored(_ peer: S3TestPeer, key: String, content: [UInt8]) throws {
        let object = try peer.object(key)
        #expect(object.missing == nil)
        #expect(object.size == content.count)
        #expect(object.sha256 == SHA256.hash(content).hex)
        #expect(object.crc32c == CRC32C.checksum(content))
    }

    @Test(arguments: S3Server.allCases, [0, 1, (5 << 20) - 1, 5 << 20, (5 << 20) + 1, 4 * (5 << 20) + 12_345])
    func everySizeAtThePartBoundariesIsStoredByteExact(server: S3Server, size: Int) async throws {
        let peer = try server.peer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let key = "sizes/\(size)-\(UUID().uuidString).bin"
        let backend = try Self.backend(peer, key: key, client: client)
        let content = Self.bytes(size, seed: UInt64(size) + 7)
        let description = try Self.description(size, backend: backend)
        let upload = try await backend.create(description)
        // One part (up to 5 MiB): a single PutObject; more: a multipart upload.
        #expect((upload.uploadID == nil) == (size <= 5 << 20))
        let receipts = try await Self.sendAll(content, layout: description.layout, backend: backend, upload: upload)
        #expect(receipts.allSatisfy { $0.entityTag != nil })
        let receipt = try await backend.complete(
            upload, summary: CompletionSummary(parts: receipts, fileSHA256: SHA256.hash(content)))
        #expect(receipt.size == Int64(size))
        #expect(receipt.location == backend.objectURL)
        try Self.expectStored(peer, key: key, content: content)
        // The receipt claims only what was checked: RGW recomputed every part's signed SHA-256; moto checks
        // nothing, so the client compared every part's ETag with its MD5.
        let parts = description.layout.partCount
        let names = receipt.checks.filter { $0.parts == parts && $0.of == parts }.map(\.name)
        if server == .rgw {
            #expect(names.contains("part-sha256"))
            #expect(!names.contains("part-crc32c"))
            #expect(receipts.allSatisfy { $0.checksumCRC32C == nil })
        } else {
            #expect(!names.contains("part-sha256"))
            #expect(names.contains("part-etag-md5"))
        }
        // A multipart object's ETag (RGW completes with an empty one: it is asked for) is the parts' MD5s'.
        if upload.uploadID != nil {
            #expect(receipt.entityTag?.hasSuffix("-\(parts)\"") == true, "\(String(describing: receipt.entityTag))")
            #expect(names.contains("object-etag"))
        }
    }

    /// Virtual-host addressing for real: the bucket travels in the host name (`BUCKET.localhost`, which libcurl
    /// resolves to loopback itself) and the path holds only the key, and moto finds the bucket there.
    @Test func virtualHostAddressingPutsTheBucketInTheHostAndStoresByteExact() async throws {
        let peer = try S3Server.moto.peer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let endpoint = try S3Endpoint(
            url: "http://localhost:\(peer.port)", region: "us-east-1", addressing: .virtualHost)
        let key = "virtual-host/\(UUID().uuidString).bin"
        let destination = try S3Destination(parsing: "s3://\(peer.bucket)/\(key)")
        let backend = try S3Backend(
            destination: destination, endpoint: endpoint, flavor: .unknown,
            credentials: S3Credentials(accessKeyID: peer.accessKeyID, secretAccessKey: peer.secretAccessKey),
            client: client)
        #expect(backend.objectURL.hasPrefix("http://\(peer.bucket).localhost:\(peer.port)/virtual-host/"))
        // Two parts: creation, UploadPart and completion, all addressed by host.
        let content = Self.bytes((5 << 20) + 777, seed: 91)
        let description = try Self.description(content.count, backend: backend)
        let upload = try await backend.create(description)
        #expect(upload.uploadID != nil)
        let receipts = try await Self.sendAll(content, layout: description.layout, backend: backend, upload: upload)
        _ = try await backend.complete(
            upload, summary: CompletionSummary(parts: receipts, fileSHA256: SHA256.hash(content)))
        try Self.expectStored(peer, key: key, content: content)
    }

    @Test func unsignedPayloadPartsAreStoredByteExact() async throws {
        let peer = try S3Server.moto.peer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let key = "unsigned/\(UUID().uuidString).bin"
        // As for AWS (which checks the CRC32C, so the payload may go unsigned).
        let backend = try Self.backend(
            peer, key: key, client: client, options: S3Backend.Options(payloadSigning: .unsigned), flavor: .aws)
        let content = Self.bytes((5 << 20) + 99, seed: 11)
        let description = try Self.description(content.count, backend: backend)
        let upload = try await backend.create(description)
        let receipts = try await Self.sendAll(content, layout: description.layout, backend: backend, upload: upload)
        _ = try await backend.complete(
            upload, summary: CompletionSummary(parts: receipts, fileSHA256: SHA256.hash(content)))
        try Self.expectStored(peer, key: key, content: content)
    }

    @Test(arguments: S3Server.allCases)
    func aKilledUploadResumesFromListPartsAcrossPages(server: S3Server) async throws {
        let peer = try server.peer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let key = "resume/\(UUID().uuidString).bin"
        let content = Self.bytes(5 * (5 << 20) + 4_321, seed: 21)
        let first = try Self.backend(peer, key: key, client: client)
        let description = try Self.description(content.count, backend: first)
        #expect(description.layout.partCount == 6)
        let upload = try await first.create(description)
        var before: [PartReceipt] = []
        for index in [0, 1, 2, 4] {
            before.append(try await first.send(Self.part(index, of: content, layout: description.layout), to: upload))
        }
        // Part 3 dies mid-body: its stream is aborted after 1 MiB.
        let stream = HTTPBodyStream(length: 5 << 20)
        let range = description.layout.range(ofPart: 3)
        let slice = Array(content[Int(range.lowerBound)..<Int(range.upperBound)])
        let writer = Task {
            try await stream.write(Array(slice[0..<(1 << 20)]))
            stream.abort(reason: "the process was killed")
        }
        await #expect(throws: TransportError.self) {
            _ = try await first.send(
                UploadPart(
                    index: 3, offset: range.lowerBound, body: .stream(stream), length: Int64(slice.count),
                    sha256: SHA256.hash(slice), crc32c: CRC32C.checksum(slice)),
                to: upload)
        }
        _ = try? await writer.value

        // A new process: the snapshot is all it has. ListParts in pages of two parts.
        let snapshot = try JSONEncoder().encode(upload)
        let restored = try JSONDecoder().decode(RemoteUpload.self, from: snapshot)
        let second = try Self.backend(
            peer, key: key, client: client, options: S3Backend.Options(listPartsPageSize: 2))
        guard case .parts(let stored) = try await second.progress(of: restored) else {
            Issue.record("ListParts did not answer with parts")
            return
        }
        #expect(stored.map(\.index) == [0, 1, 2, 4])
        #expect(stored.map(\.length) == before.map(\.length))
        #expect(stored.map(\.entityTag) == before.map(\.entityTag))
        // AWS lists each part's ChecksumCRC32C; moto 5.1 and RGW list none. Where one is listed it must be ours.
        for (listed, sent) in zip(stored, before) where listed.checksumCRC32C != nil {
            #expect(listed.checksumCRC32C == sent.checksumCRC32C)
        }
        var receipts = stored
        for index in [3, 5] {
            receipts.append(
                try await second.send(Self.part(index, of: content, layout: description.layout), to: restored))
        }
        _ = try await second.complete(
            restored, summary: CompletionSummary(parts: receipts, fileSHA256: SHA256.hash(content)))
        try Self.expectStored(peer, key: key, content: content)
        #expect(try !peer.uploads().contains { $0.uploadID == upload.uploadID })
    }

    /// RGW answers ListParts of an aborted upload with 404 NoSuchKey (AWS: NoSuchUpload): both are `.gone`.
    @Test(arguments: S3Server.allCases)
    func anAbortedUploadIsGoneAndLeavesNoObject(server: S3Server) async throws {
        let peer = try server.peer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let key = "abort/\(UUID().uuidString).bin"
        let backend = try Self.backend(
            peer, key: key, client: client,
            options: S3Backend.Options(retry: S3RetryPolicy(maximumAttempts: 2, baseDelay: .milliseconds(10))))
        let content = Self.bytes(2 * (5 << 20), seed: 31)
        let description = try Self.description(content.count, backend: backend)
        let upload = try await backend.create(description)
        _ = try await backend.send(Self.part(0, of: content, layout: description.layout), to: upload)
        #expect(try peer.uploads().contains { $0.uploadID == upload.uploadID && $0.key == key })
        try await backend.abort(upload)
        #expect(try !peer.uploads().contains { $0.uploadID == upload.uploadID })
        #expect(try await backend.progress(of: upload) == .gone)
        try await backend.abort(upload)  // aborting twice is not an error
        #expect(try peer.object(key).missing == true)
        do {
            _ = try await backend.send(Self.part(1, of: content, layout: description.layout), to: upload)
            Issue.record("a part was accepted for an aborted upload")
        } catch {
            // S3 answers NoSuchUpload (404), RGW NoSuchUpload or NoSuchKey; moto 5.1 a bare 500, which is retried.
            #expect(error.code == .gone || error.code == .serverFailed, "\(error)")
        }
    }

    @Test(arguments: S3Server.allCases)
    func aWrongSecretKeyIsRefusedAndNeverEchoed(server: S3Server) async throws {
        let peer = try server.peer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let wrong = String(peer.secretAccessKey.reversed())
        for size in [10, 6 << 20] {
            let key = "denied/\(UUID().uuidString).bin"
            let backend = try Self.backend(peer, key: key, secret: wrong, client: client)
            let content = Self.bytes(size, seed: 41)
            let description = try Self.description(size, backend: backend)
            do {
                let upload = try await backend.create(description)
                _ = try await backend.send(Self.part(0, of: content, layout: description.layout), to: upload)
                Issue.record("a request signed with the wrong secret was accepted")
            } catch {
                #expect(error.code == .accessDenied)
                for text in [error.message, error.description, "\(error)", String(reflecting: error)] {
                    #expect(!text.contains(wrong))
                    #expect(!text.contains(peer.secretAccessKey))
                    #expect(!text.contains("Signature="))
                }
            }
            #expect(try peer.object(key).missing == true)
        }
    }

    @Test func temporaryCredentialsSignTheirSessionTokenAndAWrongTokenIsRefused() async throws {
        let peer = try S3Server.moto.peer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let temporary = try S3PeerProcess.get().temporary
        #expect(temporary.accessKeyID.hasPrefix("ASIA"))
        for token in [temporary.sessionToken, "not-the-token-" + temporary.sessionToken.prefix(8)] {
            let key = "token/\(UUID().uuidString).bin"
            let credentials = try S3Credentials(
                accessKeyID: temporary.accessKeyID, secretAccessKey: temporary.secretAccessKey, sessionToken: token)
            let backend = try S3Backend(
                destination: S3Destination(bucket: peer.bucket, key: key),
                endpoint: S3Endpoint(url: peer.endpoint, region: "us-east-1"), flavor: .unknown,
                credentials: credentials, client: client)
            let content = Self.bytes((5 << 20) + 3, seed: 71)
            let description = try Self.description(content.count, backend: backend)
            do {
                let upload = try await backend.create(description)
                var receipts: [PartReceipt] = []
                for index in 0..<description.layout.partCount {
                    receipts.append(
                        try await backend.send(Self.part(index, of: content, layout: description.layout), to: upload))
                }
                _ = try await backend.complete(
                    upload, summary: CompletionSummary(parts: receipts, fileSHA256: SHA256.hash(content)))
                #expect(token == temporary.sessionToken, "a wrong session token was accepted")
                try Self.expectStored(peer, key: key, content: content)
            } catch let error as TransportError {
                #expect(token != temporary.sessionToken, "\(error)")
                #expect(error.code == .accessDenied)
                #expect(!error.description.contains(token))
                #expect(!error.description.contains(temporary.secretAccessKey))
            }
        }
    }

    /// RGW answers 400 InvalidPart; the error names the part from ListParts.
    @Test(arguments: S3Server.allCases)
    func aCompletionWithAWrongETagIsRejected(server: S3Server) async throws {
        let peer = try server.peer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let key = "bad-etag/\(UUID().uuidString).bin"
        let backend = try Self.backend(peer, key: key, client: client)
        let content = Self.bytes((5 << 20) + 1, seed: 51)
        let description = try Self.description(content.count, backend: backend)
        let upload = try await backend.create(description)
        var receipts: [PartReceipt] = []
        for index in 0..<2 {
            receipts.append(
                try await backend.send(Self.part(index, of: content, layout: description.layout), to: upload))
        }
        receipts[1].entityTag = "\"00000000000000000000000000000000\""
        let error = await #expect(throws: TransportError.self) {
            _ = try await backend.complete(
                upload, summary: CompletionSummary(parts: receipts, fileSHA256: SHA256.hash(content)))
        }
        #expect(error?.code == .remoteRejected)
        #expect(error?.message.contains("part 2 is stored with ETag") == true, "\(String(describing: error))")
        try await backend.abort(upload)
    }

    @Test func aDestinationURLWithAnEndpointAndEnvironmentCredentialsUploads() async throws {
        let peer = try S3Server.rgw.peer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let key = "url/\(UUID().uuidString).bin"
        let chain = S3CredentialChain(environment: [
            "AWS_ACCESS_KEY_ID": peer.accessKeyID, "AWS_SECRET_ACCESS_KEY": peer.secretAccessKey,
            "AWS_REGION": "us-east-1",
        ])
        // No flavor given: a custom endpoint is an unknown server.
        let backend = try S3Backend(
            url: "s3://\(peer.bucket)/\(key)", endpoint: peer.endpoint, chain: chain, client: client)
        #expect(backend.flavor == .unknown)
        let content = Self.bytes(1_000, seed: 61)
        let description = try Self.description(content.count, backend: backend)
        let upload = try await backend.create(description)
        let receipt = try await backend.send(Self.part(0, of: content, layout: description.layout), to: upload)
        _ = try await backend.complete(
            upload, summary: CompletionSummary(parts: [receipt], fileSHA256: SHA256.hash(content)))
        try Self.expectStored(peer, key: key, content: content)
        #expect(throws: TransportError.self) {
            try S3Backend(url: "s3://\(peer.bucket)/k", flavor: .r2, chain: chain, client: client)
        }
    }

    @Test func crc32cMatchesThePyPIPackageAndS3sBase64Form() throws {
        let peer = try S3PeerProcess.get()
        for (count, seed) in [(0, 1), (1, 2), (63, 3), (4_096 + 5, 4), (100_000, 5)] {
            let data = Self.bytes(count, seed: UInt64(seed))
            let expected = try peer.crc32c(data)
            #expect(CRC32C.checksum(data) == expected.crc32c)
            #expect(S3Backend.checksumHeaderValue(CRC32C.checksum(data)) == expected.base64)
        }
    }
}
