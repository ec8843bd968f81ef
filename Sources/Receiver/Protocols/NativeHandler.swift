import AetherIO
import AetherIntegrity
import AetherTransport

/// The native protocol `aether/1` (`docs/PROTOCOL.md` section 3) on the engine.
enum NativeHandler {
    /// Headers on every native answer.
    static let protocolHeaders: [(name: String, value: String)] = [(AetherWire.protocolField, "1")]

    /// The receiver's `Aether-Capabilities` from its limits, with `resume-chunk` when its blob store keeps a cut
    /// chunk's received prefix in place (the directory store; not the S3 store of a fleet).
    static func capabilities(_ engine: UploadEngine) -> String {
        let limits = engine.limits
        return AetherCapabilities(
            version: AetherWire.version, minimumChunkSize: Int64(engine.minimumChunkSize),
            maximumChunkSize: Int64(limits.maximumChunkSize), maximumObjectSize: limits.maximumObjectSize,
            maximumChunks: limits.maximumChunks, parallel: limits.maximumParallelChunks, parityCodes: ["rs8"],
            encodings: [.zstd, .deflate], possession: true, challenges: true, expires: limits.expirySeconds,
            maximumRun: limits.maximumRunChunks,
            resumesChunks: engine.keepsCutPrefixes, challengeVersion: AetherWire.spotCheckVersion,
            maximumChallengeBytes: limits.maximumChallengeBytes, metadata: true,
            maximumBatch: min(limits.maximumBatchFiles, AetherWire.maximumBatchFiles),
            maximumBatchBytes: limits.maximumBatchBytes
        ).fieldValue
    }

    /// `POST /uploads` with `Aether-Protocol`.
    static func create(_ request: HTTPServerRequest, owner: ClientIdentity, context: ReceiverContext)
        -> HTTPRequestStart
    {
        guard RequestFields.mediaType(request) == AetherWire.createMediaType else {
            return .respond(
                problem(ReceiverError(.unsupportedMediaType, "a native creation is \(AetherWire.createMediaType)")))
        }
        return .stream(
            DocumentBodySink(limit: AetherWire.maximumDocumentBytes, problemHeaders: protocolHeaders) { body in
                do throws(ReceiverError) {
                    let document: NativeCreateRequest
                    do throws(AetherProtocolError) {
                        document = try NativeCreateRequest(json: body)
                    } catch {
                        throw ReceiverError(.malformedRequest, "the creation document: \(error.message)")
                    }
                    let record = try context.engine.create(
                        NewUpload(
                            uploadProtocol: .native, size: document.sizeDeferred ? nil : document.size,
                            chunkSize: Int(document.chunkSize),
                            chunks: document.sizeDeferred ? nil : document.chunks,
                            chainSessionID: document.chainSessionID,
                            contentID: document.contentID,
                            parity: document.parity.map { ParityLayout(data: $0.data, parity: $0.parity) },
                            metadata: document.metadata.mapValues { Array($0.utf8) }),
                        owner: owner)
                    context.metrics.uploadStarted("native")
                    let status = try context.engine.status(record.id, owner: owner)
                    var response = try statusResponse(status, context: context, code: 201)
                    response.add("Location", "/uploads/\(record.id)")
                    response.add(AetherWire.capabilitiesField, capabilities(context.engine))
                    return response
                } catch {
                    return problem(error)
                }
            })
    }

    /// `PUT /uploads/{id}/chunks/{index}` and `PUT /uploads/{id}/parity/{group}/{shard}`.
    static func chunk(
        _ request: HTTPServerRequest, id: UploadID, target: (index: Int?, group: Int, shard: Int),
        owner: ClientIdentity, context: ReceiverContext
    ) -> HTTPRequestStart {
        if let first = target.index, isRun(request) {
            return run(request, id: id, first: first, owner: owner, context: context)
        }
        do throws(ReceiverError) {
            guard let field = request.header(AetherWire.chunkField) else {
                throw ReceiverError(.malformedRequest, "\(AetherWire.chunkField) is missing", chunk: target.index)
            }
            let header: AetherChunkHeader
            do throws(AetherProtocolError) {
                header = try AetherChunkHeader(parsing: field)
            } catch {
                throw ReceiverError(
                    .malformedRequest, "\(AetherWire.chunkField): \(error.message)", chunk: target.index)
            }
            guard header.length >= 0, header.length <= Int64(context.engine.limits.maximumChunkSize) else {
                throw ReceiverError(.tooLarge, "the chunk is larger than the largest chunk", chunk: target.index)
            }
            let contentDigest = try RequestFields.sha256Digest(request, "Content-Digest")
            var decoder: ContentDecoder?
            if let coding = request.header("Content-Encoding"), coding.lowercased() != "identity" {
                guard let known = ContentCoding(token: coding.trimmingSpacesAndTabs()) else {
                    throw ReceiverError(
                        .unsupportedMediaType, "Content-Encoding is not zstd or deflate", chunk: target.index)
                }
                do throws(AetherProtocolError) {
                    decoder = try ContentDecoder(known, limit: header.length)
                } catch {
                    throw ReceiverError(.storageFailed, "the decoder could not start", chunk: target.index)
                }
            } else if let contentDigest, contentDigest != header.sha256 {
                throw ReceiverError(
                    .digestMismatch, "Content-Digest and \(AetherWire.chunkField) disagree", chunk: target.index)
            }
            if let length = RequestFields.contentLength(request), decoder == nil, length > header.length {
                throw ReceiverError(.tooLarge, "the body is longer than the chunk's length", chunk: target.index)
            }
            let descriptor = ChunkDescriptor(
                length: Int(header.length), crc32c: header.crc32c, sha256: header.sha256, link: header.link)
            let sink: ChunkSink
            let receipt: AetherReceiptHeader
            if let index = target.index {
                sink = try context.engine.openChunk(id, index: index, descriptor: descriptor, owner: owner)
                receipt = AetherReceiptHeader(index: index, sha256: header.sha256)
            } else {
                sink = try context.engine.openParity(
                    id, group: target.group, shard: target.shard, descriptor: descriptor, owner: owner)
                let parity = try context.engine.status(id, owner: owner).record.parity?.parity ?? 0
                receipt = AetherReceiptHeader(
                    index: target.group * parity + target.shard, sha256: header.sha256, parity: true)
            }
            return .stream(
                ChunkBodySink(
                    sink: sink, context: context, decoder: decoder, contentDigest: contentDigest, chunk: target.index
                ) { outcome in
                    var response = HTTPServerResponse(
                        status: outcome == .stored ? 201 : 200, headers: protocolHeaders)
                    response.add(AetherWire.receiptField, receipt.fieldValue)
                    return response
                })
        } catch {
            if [.digestMismatch, .lengthMismatch].contains(error.code) { context.metrics.verifyFailed() }
            return .respond(problem(error))
        }
    }

    /// `GET /uploads/{id}`: the status document; with `Aether-Partials: ?1`, listing the received prefixes of cut
    /// chunks (section 3.5).
    static func status(_ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity, context: ReceiverContext)
        -> HTTPServerResponse
    {
        do throws(ReceiverError) {
            let status = try context.engine.status(id, owner: owner)
            guard status.record.uploadProtocol == .native else {
                // IETF and tus uploads have no status document: their state is what HEAD answers.
                var response = ProblemResponse.make(
                    ReceiverError(.malformedRequest, "only a native upload has a status document"), status: 405,
                    headers: protocolHeaders)
                response.add("Allow", "HEAD, PATCH, DELETE, OPTIONS")
                return response
            }
            let partials =
                (try? RequestFields.boolean(request, AetherWire.partialsRequestField)) == true
                ? try context.engine.partials(id, owner: owner) : nil
            let chainLink = (try? RequestFields.boolean(request, AetherWire.chainLinkRequestField)) == true
            return try statusResponse(status, context: context, code: 200, partials: partials, chainLink: chainLink)
        } catch {
            return problem(error)
        }
    }

    /// `POST /uploads/{id}/challenges`.
    static func challenge(
        _ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity, context: ReceiverContext
    ) -> HTTPRequestStart {
        guard RequestFields.mediaType(request) == AetherWire.challengeMediaType else {
            return .respond(
                problem(ReceiverError(.unsupportedMediaType, "a challenge is \(AetherWire.challengeMediaType)")))
        }
        return .stream(
            DocumentBodySink(limit: AetherWire.maximumDocumentBytes, problemHeaders: protocolHeaders) { body in
                do throws(ReceiverError) {
                    let document: NativeChallengeRequest
                    do throws(AetherProtocolError) {
                        document = try NativeChallengeRequest(json: body)
                    } catch {
                        let code: ReceiverError.Code =
                            error.code == .versionUnsupported ? .challengeVersion : .malformedRequest
                        throw ReceiverError(code, "the challenge document: \(error.message)")
                    }
                    let answers = try context.engine.challenge(
                        id, items: document.items, nonce: document.nonce, owner: owner)
                    let answer = NativeChallengeAnswer(
                        answers: answers.map { .init(item: $0.item, mac: $0.mac, sha256: $0.sha256, proof: $0.proof) },
                        nonce: document.nonce)
                    return json(200, answer.jsonBytes, type: "application/json")
                } catch {
                    return problem(error)
                }
            })
    }

    /// `POST /uploads/{id}/possession`.
    static func possession(
        _ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity, context: ReceiverContext
    ) -> HTTPRequestStart {
        guard RequestFields.mediaType(request) == AetherWire.possessionMediaType else {
            return .respond(
                problem(
                    ReceiverError(.unsupportedMediaType, "a possession answer is \(AetherWire.possessionMediaType)")))
        }
        return .stream(
            DocumentBodySink(limit: AetherWire.maximumDocumentBytes, problemHeaders: protocolHeaders) { body in
                do throws(ReceiverError) {
                    let receipt = try context.engine.answerPossession(id, response: body, owner: owner)
                    context.metrics.uploadCompleted("native")
                    return json(200, receiptDocument(receipt).jsonBytes, type: AetherWire.receiptMediaType)
                } catch {
                    return problem(error)
                }
            })
    }

    /// `POST /uploads/{id}/complete`.
    static func complete(
        _ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity, context: ReceiverContext
    ) -> HTTPRequestStart {
        guard RequestFields.mediaType(request) == AetherWire.completeMediaType else {
            return .respond(
                problem(ReceiverError(.unsupportedMediaType, "a completion is \(AetherWire.completeMediaType)")))
        }
        return .stream(
            DocumentBodySink(limit: AetherWire.maximumDocumentBytes, problemHeaders: protocolHeaders) { body in
                do throws(ReceiverError) {
                    let document: NativeCompleteRequest
                    do throws(AetherProtocolError) {
                        document = try NativeCompleteRequest(json: body)
                    } catch {
                        throw ReceiverError(.malformedRequest, "the completion document: \(error.message)")
                    }
                    let receipt = try context.engine.complete(
                        id, owner: owner,
                        claim: CompletionClaim(
                            chainHead: document.chainHead, fileSHA256: document.fileSHA256,
                            merkleRoot: document.merkleRoot, size: document.size))
                    context.metrics.uploadCompleted("native")
                    return json(200, receiptDocument(receipt).jsonBytes, type: AetherWire.receiptMediaType)
                } catch {
                    if [.merkleMismatch, .chainBroken, .digestMismatch].contains(error.code) {
                        context.metrics.verifyFailed()
                        context.metrics.uploadFailed("native")
                    }
                    return problem(error)
                }
            })
    }

    /// The status document answer (`application/aether-status+json`); `chainLink` only when the request asked for
    /// it (`Aether-Chain-Link: ?1`), as `partials`.
    static func statusResponse(
        _ status: UploadStatus, context: ReceiverContext, code: Int, partials: [ChunkPrefix]? = nil,
        chainLink: Bool = false
    ) throws(ReceiverError) -> HTTPServerResponse {
        let record = status.record
        let state: NativeStatusDocument.State =
            switch record.state {
            case .open: .open
            case .complete: .complete
            case .failed: .failed
            case .expired: .expired
            }
        let parity = record.parity.map { layout in
            NativeStatusDocument.Parity(
                scheme: ParityScheme(code: "rs8", data: layout.data, parity: layout.parity),
                received: ChunkBitmap(
                    count: status.parityReceived.count,
                    set: status.parityReceived.indices.filter { status.parityReceived[$0] }))
        }
        var document = NativeStatusDocument(
            id: record.id.rawValue, size: record.size ?? 0, chunkSize: Int64(record.chunkSize),
            chunks: record.size == nil ? status.received.count : record.chunks,
            received: ChunkBitmap(
                count: status.received.count, set: status.received.indices.filter { status.received[$0] }),
            chainVerifiedThrough: record.chainVerifiedThrough,
            expires: status.expiresAt ?? status.receipt?.completedAt ?? record.updatedAt, parity: parity,
            possessionChallenge: status.possessionChallenge, state: state)
        document.sizeDeferred = record.size == nil
        document.chainLink = chainLink && record.chainVerifiedThrough >= 0 ? record.chainLink : nil
        document.partials = partials?.map { .init(index: $0.index, received: Int64($0.received)) }
        var response = json(code, document.jsonBytes, type: AetherWire.statusMediaType)
        response.add("Cache-Control", "no-store")
        return response
    }

    /// `HEAD /uploads/{id}` fields for a native upload (section 3.4).
    static func headFields(_ status: UploadStatus) -> [(name: String, value: String)] {
        protocolHeaders + [
            ("Upload-Offset", String(min(status.offset, status.record.size ?? status.offset))),
            ("Upload-Complete", status.isComplete ? "?1" : "?0"),
            (
                AetherWire.receivedField,
                AetherReceivedHeader(chunks: status.storedChunks, prefix: status.prefixChunks).fieldValue
            ),
            ("Cache-Control", "no-store"),
        ]
    }

    static func receiptDocument(_ receipt: UploadReceiptRecord) -> NativeReceipt {
        NativeReceipt(
            id: receipt.id.rawValue, size: receipt.size, chunks: receipt.chunks, fileSHA256: receipt.fileSHA256,
            merkleRoot: receipt.merkleRoot, chainHead: receipt.chainHead, cid: receipt.cid,
            completedAt: receipt.completedAt)
    }

    static func json(_ status: Int, _ body: [UInt8], type: String) -> HTTPServerResponse {
        var response = HTTPServerResponse(status: status, headers: protocolHeaders, body: body)
        response.add("Content-Type", type)
        return response
    }

    static func problem(_ error: ReceiverError) -> HTTPServerResponse {
        ProblemResponse.make(error, headers: protocolHeaders)
    }
}

extension String {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpacesAndTabs() -> String { self[...].trimmingCharacters(in: " \t") }
}
