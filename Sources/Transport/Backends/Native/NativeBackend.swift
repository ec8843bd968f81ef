public import AetherIO
package import AetherIntegrity
package import AetherSecurity

/// The native protocol `aether/1` (`docs/PROTOCOL.md` sections 2 and 3) as an `UploadBackend`: indexed chunks sent
/// in parallel and in any order, each with its SHA-256, CRC32C and commitment-chain link (`Aether-Chunk`), parity
/// shards, resume from the receiver's bitmap, Byzantine spot checks with Merkle proofs, proof-of-possession
/// dedup, and a completion whose receipt is compared value by value with the client's own computation.
///
/// Chunks travel compressed (`Content-Encoding: zstd` or `deflate`) only when `options.compression` asks for it,
/// the receiver lists the coding in its capabilities, and the compressibility probe says it saves at least 10%;
/// `Aether-Chunk` always describes the uncompressed bytes and `Content-Digest` the bytes as sent.
///
/// The bearer token (`options.bearerToken`) is only ever written into the `Authorization` field: no error, message
/// or description carries it.
public struct NativeBackend: NativeFeaturesBackend {
    /// How a request reaches the receiver (the HTTP client, or a script in tests).
    package typealias Transport = @Sendable (HTTPRequest) async throws(TransportError) -> HTTPResponse

    /// Re-blocking rules from the receiver's capabilities: equal chunks of `chunkSize` (the last holds the rest),
    /// parallel and out-of-order parts, SHA-256 and CRC32C per chunk, resume by bitmap.
    public let capabilities: BackendCapabilities
    /// Runs, the native features, the chain head over the checked prefix, and parts of a growing file in parallel.
    public var features: BackendFeatures {
        BackendFeatures(runs: self, native: self, chain: self, parallelFollow: true)
    }
    /// What the receiver announced in `Aether-Capabilities`.
    package let server: AetherCapabilities
    /// Where uploads are created (`POST`).
    public let creationURL: String
    /// How this backend talks.
    public let options: NativeBackendOptions

    private let resource: HTTPUploadResource

    /// Asks `creationURL` for its capabilities (`OPTIONS`) and builds a backend for them; a server without a valid
    /// `Aether-Capabilities` field is `.protocolUnsupported` (the client then speaks IETF resumable upload).
    public static func discover(
        creationURL: String, client: HTTPClient, options: NativeBackendOptions = NativeBackendOptions()
    ) async throws(TransportError) -> NativeBackend {
        let probe = try NativeBackend(
            creationURL: creationURL, server: AetherCapabilities(), options: options,
            transport: { (request) async throws(TransportError) -> HTTPResponse in try await client.send(request) })
        let response = try await probe.exchange("OPTIONS", probe.creationURL)
        guard (200..<300).contains(response.status) else { throw probe.error(for: response, "OPTIONS") }
        return try NativeBackend(
            creationURL: creationURL, server: try Self.capabilities(in: response.headers), client: client,
            options: options)
    }

    /// The `Aether-Capabilities` of an answer; absent is `.protocolUnsupported`, malformed `.protocolViolation`.
    package static func capabilities(in headers: HTTPHeaders) throws(TransportError) -> AetherCapabilities {
        let values = headers.values(AetherWire.capabilitiesField)
        guard !values.isEmpty else {
            throw TransportError(.protocolUnsupported, "the answer has no Aether-Capabilities: native is not spoken")
        }
        do {
            return try AetherCapabilities(parsing: values.joined(separator: ", "))
        } catch {
            throw TransportError(
                .protocolViolation, "Aether-Capabilities is malformed (\(error.code)\(Self.memberNote(error)))")
        }
    }

    /// A backend for a receiver whose capabilities are known, sending through `client`.
    package init(
        creationURL: String, server: AetherCapabilities, client: HTTPClient,
        options: NativeBackendOptions = NativeBackendOptions()
    ) throws(TransportError) {
        try self.init(
            creationURL: creationURL, server: server, options: options,
            transport: { (request) async throws(TransportError) -> HTTPResponse in try await client.send(request) })
    }

    /// A backend with its transport given (tests script it).
    init(creationURL: String, server: AetherCapabilities, options: NativeBackendOptions, transport: @escaping Transport)
        throws(TransportError)
    {
        guard server.version == AetherWire.version else {
            throw TransportError(.versionUnsupported, "the receiver speaks aether/\(server.version), not aether/1")
        }
        var fields = HTTPHeaders([(AetherWire.protocolField, String(AetherWire.version))])
        if let token = options.bearerToken { fields.replace("Authorization", token.fieldValue) }
        resource = try HTTPUploadResource(
            creationURL: creationURL, peer: "the receiver", headers: options.headers, protocolFields: fields,
            version: options.version, timeouts: options.timeouts,
            responseBodyLimit: AetherWire.maximumStatusDocumentBytes, send: transport)
        if let parity = options.parity {
            do { try parity.validate() } catch {
                throw TransportError(.invalidArgument, "the parity scheme is invalid\(Self.memberNote(error))")
            }
        }
        self.creationURL = resource.creationURL
        self.server = server
        self.options = options
        capabilities = BackendCapabilities(
            minimumPartSize: server.minimumChunkSize, maximumPartSize: server.maximumChunkSize,
            maximumParts: min(server.maximumChunks, AetherWire.maximumChunks), equalParts: true,
            parallelParts: server.parallel > 1, outOfOrderParts: true, checksums: [.sha256, .crc32c],
            resumeQuery: .chunkBitmap, maximumObjectSize: server.maximumObjectSize)
    }

    /// This backend with other options (parity scheme, compression), talking through the same transport.
    package func with(options: NativeBackendOptions) throws(TransportError) -> NativeBackend {
        try NativeBackend(creationURL: creationURL, server: server, options: options, transport: resource.send)
    }

    /// `Idempotency-Key` of one attempt at one chunk (section 3.2): the hex SHA-256 of
    /// `sessionID ":" index ":" sha-256 hex ":" attempt`.
    public static func idempotencyKey(sessionID: String, index: Int, sha256: Digest32, attempt: Int) -> String {
        SHA256.hash(Array("\(sessionID):\(index):\(sha256.hex):\(attempt)".utf8)).hex
    }

    // MARK: Create (3.1)

    public func create(_ description: UploadDescription) async throws(TransportError) -> RemoteUpload {
        try await createUpload(description).upload
    }

    /// Creates the upload and returns the receiver's first status document with it; its `possessionChallenge`
    /// is set when the receiver already holds the object (answer it with `provePossession`).
    package func createUpload(_ description: UploadDescription) async throws(TransportError) -> (
        upload: RemoteUpload, status: NativeStatusDocument
    ) {
        let request = try createRequest(description)
        let response = try await exchange(
            "POST", creationURL, HTTPHeaders([("Content-Type", AetherWire.createMediaType)]),
            body: .bytes(request.jsonBytes))
        guard response.status == 201 || response.status == 200 else { throw error(for: response, "creation") }
        let locations = response.headers.values("Location")
        guard let text = locations.first, locations.allSatisfy({ $0 == text }) else {
            throw TransportError(.protocolViolation, "the creation answer has no single Location")
        }
        let location = try resolve(text)
        let status = try statusDocument(response.body, "creation answer")
        guard status.sizeDeferred == request.sizeDeferred, status.size == request.size,
            status.chunkSize == request.chunkSize, request.sizeDeferred || status.chunks == request.chunks
        else {
            throw TransportError(.protocolViolation, "the creation answer describes another size or chunk layout")
        }
        var upload = RemoteUpload(
            location: location, uploadID: status.id, size: request.size, partSize: request.chunkSize,
            expires: status.expires)
        if request.sizeDeferred { upload.sizeDeferred = true }
        return (upload, status)
    }

    /// The create request for `description`, checked against this client's rules and the receiver's limits.
    func createRequest(_ description: UploadDescription) throws(TransportError) -> NativeCreateRequest {
        let layout = description.layout
        guard description.size == layout.objectSize else {
            throw TransportError(.invalidArgument, "the description's size and layout disagree")
        }
        if description.sizeDeferred { return try deferredCreateRequest(description) }
        var request = NativeCreateRequest(
            size: description.size, chunkSize: layout.partSize, chunks: layout.partCount,
            chainSessionID: description.chainSessionID, contentID: description.contentID, parity: options.parity)
        if server.metadata { request.metadata = Self.keptMetadata(description.metadata) }
        do { try request.validate() } catch {
            throw TransportError(.invalidArgument, "the create request is invalid\(Self.memberNote(error))")
        }
        guard request.size <= server.maximumObjectSize else {
            throw TransportError(
                .tooLarge, "the object of \(request.size) bytes exceeds the receiver's \(server.maximumObjectSize)")
        }
        guard request.chunks <= server.maximumChunks else {
            throw TransportError(.tooLarge, "\(request.chunks) chunks exceed the receiver's \(server.maximumChunks)")
        }
        guard (server.minimumChunkSize...server.maximumChunkSize).contains(request.chunkSize) else {
            throw TransportError(
                .invalidArgument,
                "the chunk size \(request.chunkSize) is outside the receiver's \(server.minimumChunkSize)..."
                    + "\(server.maximumChunkSize)")
        }
        if let parity = request.parity, !server.parityCodes.contains(parity.code) {
            throw TransportError(.protocolUnsupported, "the receiver accepts no \(parity.code) parity")
        }
        return request
    }

    // MARK: Chunks (3.2) and parity (3.3)

    public func send(_ part: UploadPart, to upload: RemoteUpload) async throws(TransportError) -> PartReceipt {
        try HTTPUploadResource.checkLayout(
            part, size: upload.size, partSize: upload.partSize,
            partCount: NativeCreateRequest.chunkCount(size: upload.size, chunkSize: upload.partSize))
        guard let link = part.chainLink else {
            throw TransportError(.invalidArgument, "part \(part.index) has no commitment-chain link (native needs it)")
        }
        let header = AetherChunkHeader(length: part.length, crc32c: part.crc32c, sha256: part.sha256, link: link)
        let receipt = try await put(
            url(upload, "/chunks/\(part.index)"), header: header, body: part.body,
            idempotencyKey: part.idempotencyKey, what: "chunk \(part.index)")
        guard !receipt.parity, receipt.index == part.index else {
            throw TransportError(.protocolViolation, "the receipt of chunk \(part.index) names another chunk")
        }
        guard receipt.sha256 == part.sha256 else {
            throw TransportError(
                .receiptMismatch,
                "the receipt of chunk \(part.index) names SHA-256 \(receipt.sha256.hex.prefix(16))..., not the "
                    + "client's \(part.sha256.hex.prefix(16))...")
        }
        return PartReceipt(index: part.index, length: part.length, checksumCRC32C: part.crc32c)
    }

    /// Sends one parity shard of the scheme in `options.parity`; returns the receiver's receipt.
    package func send(_ shard: ParityShard, to upload: RemoteUpload) async throws(TransportError) -> AetherReceiptHeader
    {
        guard let parity = options.parity else {
            throw TransportError(.invalidArgument, "parity shards need options.parity (announced at creation)")
        }
        let chunks = NativeCreateRequest.chunkCount(size: upload.size, chunkSize: upload.partSize)
        guard shard.group >= 0, shard.group < parity.groups(chunks: chunks), shard.shard >= 0,
            shard.shard < parity.parity, shard.length == upload.partSize,
            shard.body.length == nil || shard.body.length == shard.length
        else {
            throw TransportError(
                .invalidArgument, "parity shard \(shard.group)/\(shard.shard) is outside the upload's parity layout")
        }
        let header = AetherChunkHeader(length: shard.length, crc32c: shard.crc32c, sha256: shard.sha256)
        let receipt = try await put(
            url(upload, "/parity/\(shard.group)/\(shard.shard)"), header: header, body: shard.body,
            idempotencyKey: shard.idempotencyKey, what: "parity shard \(shard.group)/\(shard.shard)")
        guard receipt.parity, receipt.index == shard.group * parity.parity + shard.shard else {
            throw TransportError(
                .protocolViolation, "the receipt of parity shard \(shard.group)/\(shard.shard) names another shard")
        }
        guard receipt.sha256 == shard.sha256 else {
            throw TransportError(
                .receiptMismatch,
                "the receipt of parity shard \(shard.group)/\(shard.shard) names another SHA-256 than the client's")
        }
        return receipt
    }

    /// The headers of a chunk or shard `PUT` (section 3.2, in this order) and the body as sent.
    func chunkRequest(header: AetherChunkHeader, body: HTTPRequestBody, idempotencyKey: String?)
        throws(TransportError) -> (headers: HTTPHeaders, body: HTTPRequestBody)
    {
        var sent = body
        var digest = header.sha256
        var coding: ContentCoding?
        if let wanted = options.compression, server.encodings.contains(wanted), let bytes = body.heldBytes,
            CompressionProbe.pays(bytes, coding: wanted)
        {
            let coded: [UInt8]
            do { coded = try ContentEncoder.encode(bytes, wanted, level: options.compressionLevel) } catch {
                throw TransportError(.invalidArgument, "the \(wanted) encoder failed (\(error.code))")
            }
            if coded.count < bytes.count {
                sent = .bytes(coded)
                digest = SHA256.hash(coded)
                coding = wanted
            }
        }
        var headers = HTTPHeaders([
            (AetherWire.chunkField, header.fieldValue),
            ("Content-Digest", "sha-256=" + StructuredField.serialize(digest.bytes)),
        ])
        if let idempotencyKey { headers.add("Idempotency-Key", idempotencyKey) }
        if let coding { headers.add("Content-Encoding", coding.rawValue) }
        return (headers, sent)
    }

    private func put(
        _ url: String, header: AetherChunkHeader, body: HTTPRequestBody, idempotencyKey: String?, what: String
    ) async throws(TransportError) -> AetherReceiptHeader {
        let request = try chunkRequest(header: header, body: body, idempotencyKey: idempotencyKey)
        let response = try await exchange("PUT", url, request.headers, body: request.body)
        guard response.status == 200 || response.status == 201 else { throw error(for: response, what) }
        let values = response.headers.values(AetherWire.receiptField)
        guard values.count == 1, let value = values.first else {
            throw TransportError(.protocolViolation, "the answer to \(what) has no single Aether-Receipt")
        }
        do {
            return try AetherReceiptHeader(parsing: value)
        } catch {
            throw TransportError(
                .protocolViolation,
                "the Aether-Receipt of \(what) is malformed (\(error.code)\(Self.memberNote(error)))")
        }
    }

    // MARK: Resume (3.4, 3.5)

    public func progress(of upload: RemoteUpload) async throws(TransportError) -> RemoteProgress {
        let status: NativeStatusDocument
        do { status = try await self.status(of: upload) } catch {
            if error.code == .gone { return .gone }
            throw error
        }
        return Self.progress(status)
    }

    /// What a status document says the receiver holds.
    static func progress(_ status: NativeStatusDocument) -> RemoteProgress {
        switch status.state {
        case .expired, .failed: return .gone
        case .complete: return .chunks(Set(0..<status.chunks), complete: true)
        case .open: return .chunks(Set(status.received.setIndices), complete: false)
        }
    }

    /// The status document (`GET`), checked against the upload's layout.
    package func status(of upload: RemoteUpload) async throws(TransportError) -> NativeStatusDocument {
        try await status(of: upload, partials: false)
    }

    /// The status document (`GET`), checked against the upload's layout; with `partials`, asked with the received
    /// prefixes of cut chunks (`Aether-Partials: ?1`, section 3.5), which a receiver that keeps none leaves out.
    package func status(of upload: RemoteUpload, partials: Bool) async throws(TransportError) -> NativeStatusDocument {
        var headers = HTTPHeaders([(AetherWire.chainLinkRequestField, "?1")])
        if partials { headers.add(AetherWire.partialsRequestField, "?1") }
        let response = try await exchange("GET", upload.location, headers)
        guard response.status == 200 else { throw error(for: response, "status request") }
        let status = try statusDocument(response.body, "status answer")
        guard status.sizeDeferred ? upload.sizeDeferred == true : status.size == upload.size,
            status.chunkSize == upload.partSize,
            upload.uploadID == nil || upload.uploadID == status.id
        else { throw TransportError(.protocolViolation, "the status document describes another upload") }
        return status
    }

    /// The `HEAD` answer: the stored prefix in bytes, whether the upload is complete, and the stored chunk counts.
    package func received(of upload: RemoteUpload) async throws(TransportError) -> (
        offset: Int64, complete: Bool, received: AetherReceivedHeader
    ) {
        let response = try await exchange("HEAD", upload.location)
        guard response.status == 200 || response.status == 204 else { throw error(for: response, "HEAD") }
        guard let offset = IETFResumableBackend.integer(response.headers, "Upload-Offset"), offset <= upload.size else {
            throw TransportError(.protocolViolation, "the HEAD answer has no valid Upload-Offset")
        }
        let values = response.headers.values(AetherWire.receivedField)
        let received: AetherReceivedHeader
        do {
            received = try AetherReceivedHeader(parsing: values.joined(separator: ", "))
        } catch {
            throw TransportError(.protocolViolation, "the HEAD answer's Aether-Received is missing or malformed")
        }
        return (offset, IETFResumableBackend.boolean(response.headers, "Upload-Complete") ?? false, received)
    }

    // MARK: Byzantine spot checks (3.6)

    /// The upload id a spot check binds into its answers: the receiver's id of `upload` (from its status document),
    /// else the last segment of its location's path.
    public static func spotCheckUploadID(_ upload: RemoteUpload) -> [UInt8] {
        if let id = upload.uploadID { return Array(id.utf8) }
        let path = upload.location.split(separator: "?", maxSplits: 1).first ?? ""
        return Array((path.split(separator: "/").last ?? "").utf8)
    }

    /// Sends the spot check `challenge` (version 2) and checks the answer against it: the same nonce and ranges in
    /// the same order, each recorded hash the client's own (`chunkHashes`, the SHA-256 of every chunk in order),
    /// each proof leading from it to the client's Merkle root, and with `requireProofs` (every chunk acknowledged) no
    /// proof missing, and no MAC missing (a chunk the receiver says it does not hold). Returns the MACs in the order
    /// of the ranges for `ByzantineVerifier` to judge against the client's bytes: only they prove the bytes are held.
    ///
    /// A receiver that does not advertise version 2 is `.protocolUnsupported` (nothing is sent); an answer of
    /// another version (version 1: hashes, no MAC) and any check above failing are `.verificationFailed`; a
    /// malformed answer is `.protocolViolation`.
    package func challenge(
        _ upload: RemoteUpload, _ challenge: ByzantineChallenge, chunkHashes: [Digest32], requireProofs: Bool
    ) async throws(TransportError) -> [Digest32] {
        guard server.answersSpotChecks, let budget = server.maximumChallengeBytes else {
            throw TransportError(
                .protocolUnsupported, "the receiver answers no spot checks of version \(AetherWire.spotCheckVersion)")
        }
        let chunks = NativeCreateRequest.chunkCount(size: upload.size, chunkSize: upload.partSize)
        let request = NativeChallengeRequest(challenge)
        guard chunkHashes.count == chunks, challenge.items.allSatisfy({ $0.index < chunks }),
            challenge.uploadID == Self.spotCheckUploadID(upload), request.totalBytes <= budget
        else {
            throw TransportError(
                .invalidArgument, "the spot check does not fit the upload, its chunk hashes or challenge-bytes")
        }
        do { try request.validate() } catch {
            throw TransportError(.invalidArgument, "the challenge is invalid\(Self.memberNote(error))")
        }
        // The receiver reads at most challenge-bytes, and an answer counts only within 500 ms: a deadline of its
        // own, not the long idle limit of the requests that make it read whole objects.
        let response = try await exchange(
            "POST", url(upload, "/challenges"), HTTPHeaders([("Content-Type", AetherWire.challengeMediaType)]),
            body: .bytes(request.jsonBytes), total: Self.spotCheckDeadline)
        guard response.status == 200 else { throw error(for: response, "challenge") }
        let answer: NativeChallengeAnswer
        do { answer = try NativeChallengeAnswer(json: response.body) } catch {
            if error.code == .versionUnsupported {
                throw TransportError(
                    .verificationFailed,
                    "the receiver answered the spot check in another format than version \(AetherWire.spotCheckVersion)"
                        + " (\(error.message)); the answer proves nothing and is refused")
            }
            throw TransportError(
                .protocolViolation, "the challenge answer is malformed (\(error.code)\(Self.memberNote(error)))")
        }
        try Self.verify(answer, for: request, chunkHashes: chunkHashes, requireProofs: requireProofs)
        return answer.answers.compactMap(\.mac)
    }

    /// Checks a challenge answer's shape against the request, and its recorded hashes and proofs (claims) against
    /// the client's chunk hashes and Merkle root.
    static func verify(
        _ answer: NativeChallengeAnswer, for request: NativeChallengeRequest, chunkHashes: [Digest32],
        requireProofs: Bool
    ) throws(TransportError) {
        guard answer.nonce == request.nonce else {
            throw TransportError(.verificationFailed, "the challenge answer repeats another nonce")
        }
        guard answer.answers.map(\.item) == request.items else {
            throw TransportError(.verificationFailed, "the challenge answer is for other chunks or ranges than asked")
        }
        var tree = StreamingMerkleTree()
        for hash in chunkHashes {
            do { _ = try tree.append(hash) } catch {
                throw TransportError(.invalidArgument, "too many chunk hashes for a Merkle tree")
            }
        }
        let root = tree.root
        for item in answer.answers {
            let index = item.item.index
            let ours = chunkHashes[index]
            guard item.mac != nil else {
                throw TransportError(.verificationFailed, "the receiver does not hold chunk \(index)")
            }
            if let theirs = item.sha256, theirs != ours {
                throw TransportError(.verificationFailed, "the receiver's recorded hash of chunk \(index) differs")
            }
            if let proof = item.proof {
                guard proof.verify(chunkHash: ours, root: root, leafCount: UInt64(chunkHashes.count)) else {
                    throw TransportError(
                        .verificationFailed, "the Merkle proof of chunk \(index) does not lead to the root")
                }
            } else if requireProofs {
                throw TransportError(.verificationFailed, "the receiver gave no Merkle proof for chunk \(index)")
            }
        }
    }

    // MARK: Proof of possession (3.7)

    /// Answers the receiver's possession challenge (from `createUpload`'s status document) with `prover`. A passed
    /// check completes the upload: the receipt is compared with `summary` as `complete` does. A failed or expired
    /// check (`403 possession-failed`) returns nil: upload the chunks.
    package func provePossession(
        _ upload: RemoteUpload, challenge: [UInt8], prover: ProofOfPossessionProver, summary: CompletionSummary
    ) async throws(TransportError) -> UploadReceipt? {
        let parsed: PossessionChallenge
        do { parsed = try PossessionChallenge(serialized: challenge) } catch {
            throw TransportError(.protocolViolation, "the receiver's possession challenge is malformed")
        }
        let answer: PossessionResponse
        do { answer = try prover.respond(to: parsed) } catch {
            throw TransportError(.invalidArgument, "the possession challenge cannot be answered (\(error.code))")
        }
        let response = try await exchange(
            "POST", url(upload, "/possession"), HTTPHeaders([("Content-Type", AetherWire.possessionMediaType)]),
            body: .bytes(answer.serialized), rereadsStoredBytes: true)
        switch response.status {
        case 200: return try verify(response.body, upload: upload, summary: summary)
        case 403 where Self.problem(in: response)?.name == "possession-failed": return nil
        default: throw error(for: response, "possession answer")
        }
    }

    // MARK: Complete (3.8) and cancel (3.9)

    public func complete(_ upload: RemoteUpload, summary: CompletionSummary) async throws(TransportError)
        -> UploadReceipt
    {
        guard let merkleRoot = summary.merkleRoot, let chainHead = summary.chainHead else {
            throw TransportError(.invalidArgument, "a native completion needs the Merkle root and the chain head")
        }
        let request = NativeCompleteRequest(
            chainHead: chainHead, fileSHA256: summary.fileSHA256, merkleRoot: merkleRoot,
            size: upload.sizeDeferred == true ? upload.size : nil)
        let response = try await exchange(
            "POST", url(upload, "/complete"), HTTPHeaders([("Content-Type", AetherWire.completeMediaType)]),
            body: .bytes(request.jsonBytes), rereadsStoredBytes: true)
        guard response.status == 200 else {
            if response.status == 422 { throw completionMismatch(response) }
            throw error(for: response, "completion")
        }
        return try verify(response.body, upload: upload, summary: summary)
    }

    /// A completion answered 422: the receiver compared what it stores (the chunk hashes, their chain, the bytes
    /// it hashed, the chunks' lengths) with this file's values and they differ, so the stored object is not this
    /// file. `.receiptMismatch`: final, since the same completion compares the same stored chunks again (a chunk
    /// in transit is checked when it is sent; a 422 here is never damage on the way).
    func completionMismatch(_ response: HTTPResponse) -> TransportError {
        TransportError(
            .receiptMismatch,
            "the receiver found its stored chunks differ from the file's at completion (422\(Self.problemNote(response)))"
        )
    }

    /// Parses a receipt and compares every value with the client's; what differs is named in a `.receiptMismatch`.
    func verify(_ body: [UInt8], upload: RemoteUpload, summary: CompletionSummary) throws(TransportError)
        -> UploadReceipt
    {
        let receipt: NativeReceipt
        do { receipt = try NativeReceipt(json: body) } catch {
            throw TransportError(
                .protocolViolation, "the receipt is malformed (\(error.code)\(Self.memberNote(error)))")
        }
        var differs: [String] = []
        if let id = upload.uploadID, receipt.id != id { differs.append("id") }
        if receipt.size != upload.size { differs.append("size") }
        if receipt.chunks != NativeCreateRequest.chunkCount(size: upload.size, chunkSize: upload.partSize) {
            differs.append("chunks")
        }
        if receipt.fileSHA256 != summary.fileSHA256 { differs.append("fileSHA256") }
        if let merkleRoot = summary.merkleRoot, receipt.merkleRoot != merkleRoot { differs.append("merkleRoot") }
        if let chainHead = summary.chainHead, receipt.chainHead != chainHead { differs.append("chainHead") }
        if receipt.cid != CIDv1(digest: summary.fileSHA256).string { differs.append("cid") }
        guard differs.isEmpty else {
            throw TransportError(
                .receiptMismatch,
                "the receipt's \(differs.joined(separator: ", ")) \(differs.count == 1 ? "differs" : "differ") from "
                    + "the client's")
        }
        return UploadReceipt(
            location: upload.location, size: receipt.size, serverSHA256: receipt.fileSHA256,
            serverMerkleRoot: receipt.merkleRoot, serverChainHead: receipt.chainHead)
    }

    public func abort(_ upload: RemoteUpload) async throws(TransportError) {
        let response = try await exchange("DELETE", upload.location)
        switch response.status {
        case 200..<300, 404, 410: return
        default: throw error(for: response, "cancel")
        }
    }

    // MARK: Requests

    func exchange(
        _ method: String, _ url: String, _ extra: HTTPHeaders = HTTPHeaders(), body: HTTPRequestBody = .empty,
        rereadsStoredBytes: Bool = false, total: Duration? = nil
    ) async throws(TransportError) -> HTTPResponse {
        var timeouts = options.timeouts
        if let total { timeouts.total = min(timeouts.total ?? total, total) }
        if rereadsStoredBytes {
            // The receiver answers these only after reading stored bytes back (sampled chunks, the rest of the
            // object), which takes long on a slow store (S3): silence is expected, so the idle limit and the wait
            // for the answer are longer.
            timeouts = timeouts.allowingSilence(Self.storedBytesIdle)
        }
        return try await resource.exchange(method, url, extra, body: body, timeouts: timeouts)
    }

    /// The whole exchange of a spot check (its answer counts only within 500 ms; this tells a late one from none):
    /// past it the request ends `.timedOut`.
    public static let spotCheckDeadline = Duration.seconds(10)

    /// The idle limit and first-byte wait of a request whose answer waits for the receiver to read stored bytes back.
    static let storedBytesIdle = Duration.seconds(300)

    /// `upload`'s URL with `suffix` appended to its path (before a query).
    func url(_ upload: RemoteUpload, _ suffix: String) -> String { Self.appending(suffix, to: upload.location) }

    /// `location` with `suffix` appended to its path (before a query).
    static func appending(_ suffix: String, to location: String) -> String {
        guard let query = location.firstIndex(of: "?") else { return location + suffix }
        return String(location[..<query]) + suffix + String(location[query...])
    }

    /// `reference` resolved against the creation URL; another origin is refused.
    func resolve(_ reference: String) throws(TransportError) -> String {
        try resource.resolve(reference)
    }

    func statusDocument(_ body: [UInt8], _ what: String) throws(TransportError) -> NativeStatusDocument {
        do { return try NativeStatusDocument(json: body) } catch {
            throw TransportError(
                .protocolViolation,
                "the \(what)'s status document is malformed (\(error.code)\(Self.memberNote(error)))")
        }
    }

    static func memberNote(_ error: AetherProtocolError) -> String { error.member.map { ", member \($0)" } ?? "" }

    /// The RFC 9457 problem of an answer, if its body is one.
    static func problem(in response: HTTPResponse) -> ProblemDocument? {
        guard !response.body.isEmpty else { return nil }
        // Advisory: the status code decides the error; a malformed problem only loses its name in the message.
        return try? ProblemDocument(json: response.body)
    }

    /// `, problem NAME[ at chunk N]` for an answer carrying a problem document, else nothing.
    static func problemNote(_ response: HTTPResponse) -> String {
        guard let problem = problem(in: response) else { return "" }
        return ", problem \(problem.name)" + (problem.chunk.map { " at chunk \($0)" } ?? "")
    }

    /// The error for a non-success answer: the status decides the code, the problem's name (never its detail, which
    /// the receiver wrote) goes into the message.
    func error(for response: HTTPResponse, _ what: String) -> TransportError {
        let status = response.status
        let note = Self.problemNote(response)
        switch status {
        case 409: return TransportError(.conflict, "the receiver refused the \(what) (409\(note))")
        case 422:
            return TransportError(.checksumMismatch, "the receiver found the \(what)'s bytes differ (422\(note))")
        case 429, 503: return TransportError(.throttled, "the receiver is busy (\(status) to the \(what)\(note))")
        default: return resource.error(for: response, what, note: note)
        }
    }
}

extension HTTPRequestBody {
    /// The bytes of a body held in memory (bytes or chunks), copied into one array; nil for a stream.
    var heldBytes: [UInt8]? {
        switch storage {
        case .none: return []
        case .stream: return nil
        case .pieces(let pieces, _):
            var out: [UInt8] = []
            for piece in pieces {
                switch piece {
                case .bytes(let bytes): out += bytes
                case .chunk(let chunk): out += chunk.bytes
                }
            }
            return out
        }
    }
}

extension NativeBackend: ChainReportingBackend {
    /// The head of the receiver's commitment chain over the prefix whose links it checked (`chainLink` of the status
    /// document, section 3.5): nil before it checked any. A receiver that checked links but does not report the last
    /// one is `.protocolUnsupported`, so the resume stays at level 2.
    package func chainState(of upload: RemoteUpload) async throws(TransportError) -> ChainState? {
        let status = try await status(of: upload)
        guard status.chainVerifiedThrough >= 0 else { return nil }
        guard let link = status.chainLink else {
            throw TransportError(.protocolUnsupported, "the receiver does not report its chain link (an older aether)")
        }
        return ChainState(count: status.chainVerifiedThrough + 1, head: link)
    }
}
