import AetherIO
import AetherTransport
import Foundation
import Testing

/// `BackendDetector` against the live peers: the IETF server (`peers/ietf_peer.py`, also answering as an Aether
/// receiver, a native-only server and servers without OPTIONS support), tuspyserver (`peers/tus_peer.py`) and moto
/// (`peers/s3_peer.py`). Each destination is detected as its protocol and a small upload completes through the
/// backend the detector built.
@Suite struct BackendDetectorInteropTests {
    static func client() throws -> HTTPClient { try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none)) }

    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    /// Uploads `content` through `backend` in parts of about `partSize`, in order, and completes.
    static func upload(_ content: [UInt8], partSize: Int64, through backend: any UploadBackend) async throws
        -> UploadReceipt
    {
        let layout = try PartLayout(
            objectSize: Int64(content.count), preferred: partSize, capabilities: backend.capabilities, alignment: 1)
        let upload = try await backend.create(
            UploadDescription(
                size: Int64(content.count), layout: layout, contentType: "application/octet-stream",
                // tuspyserver answers HEAD with 400 for an upload created without a file name.
                metadata: ["filename": "detect.bin"], chainSessionID: "detect-test"))
        var receipts: [PartReceipt] = []
        for index in 0..<layout.partCount {
            let range = layout.range(ofPart: index)
            let slice = Array(content[Int(range.lowerBound)..<Int(range.upperBound)])
            let part = UploadPart(
                index: index, offset: range.lowerBound, body: .bytes(slice), length: Int64(slice.count),
                sha256: SHA256.hash(slice), crc32c: CRC32C.checksum(slice))
            receipts.append(try await backend.send(part, to: upload))
        }
        return try await backend.complete(
            upload, summary: CompletionSummary(parts: receipts, fileSHA256: SHA256.hash(content)))
    }

    static func code(_ body: () async throws -> some Any) async -> TransportError? {
        do {
            _ = try await body()
            return nil
        } catch let error as TransportError {
            return error
        } catch {
            return nil
        }
    }

    /// The requests the IETF peer saw on `path`.
    static func requests(_ peer: IETFPeerProcess, _ client: HTTPClient, path: String) async throws
        -> [IETFLoggedRequest]
    {
        let response = try await client.send(HTTPRequest(url: "http://127.0.0.1:\(peer.port)/log"))
        return try JSONDecoder().decode([IETFLoggedRequest].self, from: Data(response.body)).filter {
            $0.path == path
        }
    }

    // MARK: IETF

    @Test func theIETFServerIsDetectedAsIETFAndAnUploadCompletesThroughIt() async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        // A path of its own (the peer treats an unknown mode as normal): other suites share the peer and its log.
        let mode = "detect-\(UUID().uuidString)"
        let url = peer.creationURL(mode)
        let detected = try await BackendDetector(client: client).detect(url)
        #expect(detected.mode == .ietfResumable)
        #expect(detected.offer?.modes == [.ietfResumable])
        #expect(detected.offer?.status == 204)
        #expect(detected.fallbackReason == nil)
        let backend = try #require(detected.backend as? IETFResumableBackend)
        #expect(backend.version == .latest)
        #expect(backend.creationURL == url)
        let content = Self.bytes(9_000, seed: 1)
        let receipt = try await Self.upload(content, partSize: 4_000, through: detected.backend)
        #expect(receipt.size == Int64(content.count))
        #expect(peer.stored(receipt.location).map { SHA256.hash($0) } == SHA256.hash(content))
        // The one discovery request: OPTIONS with the interop version and no Upload-Complete.
        let options = try await Self.requests(peer, client, path: "/create/\(mode)").filter { $0.method == "OPTIONS" }
        #expect(options.count == 1)
        #expect(options.allSatisfy { $0.version == "8" && $0.complete == nil && $0.contentType == nil })
    }

    @Test func theIETFLimitsInTheOPTIONSAnswerBoundTheDetectedBackend() async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let options = BackendDetector.Options(ietfVersion: .draft05)
        let detected = try await BackendDetector(client: client, options: options).detect(peer.creationURL("limits"))
        let backend = try #require(detected.backend as? IETFResumableBackend)
        #expect(backend.version == .draft05)
        #expect(backend.capabilities.maximumObjectSize == 4096)
        #expect(backend.capabilities.maximumPartSize == 1024)
        // Not 3,000 bytes: IETFInteropTests looks for its own 3,000-byte creation on this path in the shared log.
        let content = Self.bytes(2_500, seed: 2)
        let receipt = try await Self.upload(content, partSize: 1024, through: detected.backend)
        #expect(peer.stored(receipt.location) == content)
    }

    /// The peer's `Aether-Capabilities` lacks required members (`max-object`, `max-chunks`, `expires`): native is
    /// unusable, so the detector falls back to IETF and says why. (The real receiver is detected as native in
    /// `ReceiverTests/NativeLiveTests`.)
    @Test func anUnusableNativeOfferBesideIETFIsReachedWithIETFAndTheReasonIsRecorded() async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let detected = try await BackendDetector(client: client).detect(peer.creationURL("native"))
        #expect(detected.mode == .ietfResumable)
        #expect(detected.offer?.modes == [.native, .ietfResumable])
        let reason = try #require(detected.fallbackReason)
        #expect(reason.contains("native") && reason.contains("using ietf"))
        #expect(reason.contains("max-object"))
        let content = Self.bytes(5_000, seed: 3)
        let receipt = try await Self.upload(content, partSize: 2_000, through: detected.backend)
        #expect(peer.stored(receipt.location) == content)
    }

    @Test func aServerOfferingOnlyAnUnusableNativeIsATypedErrorNamingNative() async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let detector = BackendDetector(client: client)
        let error = await Self.code { try await detector.detect(peer.creationURL("native-only")) }
        #expect(error?.code == .protocolUnsupported)
        #expect(error?.message.contains("native") == true)
        let forced = await Self.code {
            try await detector.detect(peer.creationURL("native-only"), forcing: .native)
        }
        #expect(forced?.code == .protocolUnsupported)
    }

    @Test func aForcedProtocolTheServerDoesNotOfferIsATypedErrorAndAnOfferedOneIsUsed() async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let detector = BackendDetector(client: client)
        let error = await Self.code { try await detector.detect(peer.creationURL("normal"), forcing: .tus) }
        #expect(error?.code == .protocolUnsupported)
        #expect(error?.message.contains(peer.creationURL("normal")) == true)
        #expect(error?.message.contains("offers ietf") == true)
        let forced = try await detector.detect(peer.creationURL("native"), forcing: .ietfResumable)
        #expect(forced.mode == .ietfResumable)
        #expect(forced.fallbackReason == nil)
    }

    @Test func aServerWithoutOPTIONSIsReadForIETFAndOtherwiseNamed() async throws {
        let peer = try IETFPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let detector = BackendDetector(client: client)
        let detected = try await detector.detect(peer.creationURL("no-options-ietf"))
        #expect(detected.mode == .ietfResumable)
        #expect(detected.offer?.status == 405)
        let content = Self.bytes(1_500, seed: 4)
        let receipt = try await Self.upload(content, partSize: 1_000, through: detected.backend)
        #expect(peer.stored(receipt.location) == content)
        let url = peer.creationURL("no-options")
        let error = await Self.code { try await detector.detect(url + "?token=hunter2") }
        #expect(error?.code == .protocolUnsupported)
        #expect(error?.message.contains(url) == true)
        #expect(error?.message.contains("405") == true)
        #expect(error?.message.contains("hunter2") == false)
    }

    @Test func aServerThatIsNotListeningIsATypedConnectionError() async throws {
        let client = try Self.client()
        defer { client.shutDown() }
        // Port 9 (discard) has no listener on 127.0.0.1 in the test environment.
        let error = await Self.code { try await BackendDetector(client: client).detect("http://127.0.0.1:9/up") }
        #expect(error?.code == .connectionRefused)
    }

    // MARK: tus

    @Test func tuspyserverIsDetectedAsTusAndAnUploadCompletesThroughIt() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let detected = try await BackendDetector(
            client: client, options: BackendDetector.Options(tus: TusBackendOptions(useConcatenation: false))
        ).detect(peer.tusURL("files"))
        #expect(detected.mode == .tus)
        #expect(detected.offer?.modes == [.tus])
        #expect(detected.fallbackReason == nil)
        let backend = try #require(detected.backend as? TusBackend)
        #expect(backend.server.versions == ["1.0.0"])
        #expect(backend.server.offers("creation"))
        let content = Self.bytes(200_000, seed: 5)
        let receipt = try await Self.upload(content, partSize: 64 << 10, through: detected.backend)
        #expect(receipt.size == Int64(content.count))
        #expect(SHA256.hash(try peer.storedOnTusServer("files", receipt.location)) == SHA256.hash(content))
    }

    @Test func forcingIETFOnATusServerIsATypedError() async throws {
        let peer = try TusPeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let error = await Self.code {
            try await BackendDetector(client: client).detect(peer.tusURL("files"), forcing: .ietfResumable)
        }
        #expect(error?.code == .protocolUnsupported)
        #expect(error?.message.contains("offers tus") == true)
    }

    // MARK: S3

    @Test func anS3DestinationIsTheS3BackendAndAnUploadCompletesThroughIt() async throws {
        let peer = try S3PeerProcess.get()
        let client = try Self.client()
        defer { client.shutDown() }
        let chain = S3CredentialChain(environment: [
            "AWS_ACCESS_KEY_ID": peer.accessKeyID, "AWS_SECRET_ACCESS_KEY": peer.secretAccessKey,
            "AWS_REGION": "us-east-1",
        ])
        let options = BackendDetector.Options(s3Endpoint: peer.endpoint, s3Flavor: .minio, s3Credentials: chain)
        let key = "detect/\(UUID().uuidString).bin"
        let detected = try await BackendDetector(client: client, options: options).detect(
            "s3://\(peer.bucket)/\(key)")
        #expect(detected.mode == .s3Multipart)
        #expect(detected.offer == nil)
        let backend = try #require(detected.backend as? S3Backend)
        #expect(backend.objectURL == "\(peer.endpoint)/\(peer.bucket)/\(key)")
        let content = Self.bytes((5 << 20) + 1_000, seed: 6)
        let receipt = try await Self.upload(content, partSize: 5 << 20, through: detected.backend)
        #expect(receipt.size == Int64(content.count))
        let object = try peer.object(key)
        #expect(object.size == content.count)
        #expect(object.sha256 == SHA256.hash(content).hex)
    }
}
