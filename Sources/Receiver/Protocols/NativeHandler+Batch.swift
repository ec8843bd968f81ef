import AetherIO
import AetherIntegrity
import AetherTransport

extension NativeHandler {
    /// `POST /uploads/batch` (`docs/PROTOCOL.md` section 3.10): checked before any byte is read (the media type,
    /// `Aether-Batch` within `max-batch`, a `Content-Length` within `batch-bytes` beyond the document, no content
    /// coding), then streamed into a `BatchBodySink`.
    static func batch(_ request: HTTPServerRequest, owner: ClientIdentity, context: ReceiverContext)
        -> HTTPRequestStart
    {
        do throws(ReceiverError) {
            let limits = context.engine.limits
            let maximumFiles = min(limits.maximumBatchFiles, AetherWire.maximumBatchFiles)
            guard maximumFiles > 0 else {
                throw ReceiverError(.malformedRequest, "this receiver takes no batches (it advertises no max-batch)")
            }
            guard request.header(AetherWire.protocolField)?.trimmingSpacesAndTabs() == "1" else {
                throw ReceiverError(.malformedRequest, "a batch carries Aether-Protocol: 1")
            }
            guard RequestFields.mediaType(request) == AetherWire.batchMediaType else {
                throw ReceiverError(.unsupportedMediaType, "a batch is \(AetherWire.batchMediaType)")
            }
            guard let field = request.header(AetherWire.batchField) else {
                throw ReceiverError(.malformedRequest, "\(AetherWire.batchField) is missing")
            }
            let header: AetherBatchHeader
            do throws(AetherProtocolError) {
                header = try AetherBatchHeader(parsing: field)
            } catch {
                throw ReceiverError(.malformedRequest, "\(AetherWire.batchField): \(error.message)")
            }
            guard header.files <= maximumFiles else {
                throw ReceiverError(
                    .tooLarge, "a batch of \(header.files) files is more than the \(maximumFiles) advertised")
            }
            if let coding = request.header("Content-Encoding"), coding.lowercased() != "identity" {
                throw ReceiverError(.unsupportedMediaType, "a batch travels without a content coding")
            }
            guard let length = RequestFields.contentLength(request), length >= Int64(header.document) else {
                throw ReceiverError(
                    .lengthMismatch,
                    "a batch needs a Content-Length of at least its document's \(header.document) bytes")
            }
            guard length - Int64(header.document) <= limits.maximumBatchBytes else {
                throw ReceiverError(
                    .tooLarge, "the batch's files are more than the \(limits.maximumBatchBytes) bytes advertised")
            }
            return .stream(BatchBodySink(context: context, owner: owner, header: header, contentLength: length))
        } catch {
            return .respond(problem(error))
        }
    }

    /// The problem document of one batched file that was not stored.
    static func problemDocument(_ error: ReceiverError) -> ProblemDocument {
        ProblemDocument(
            name: error.code.name, title: ProblemResponse.title(error.code), status: error.code.status,
            detail: String(error.message.prefix(1000)))
    }
}

/// A batch's body (`docs/PROTOCOL.md` section 3.10): the document, then each file's bytes. Each file is a one-chunk
/// native upload created on its first byte, its bytes streamed into the engine's `ChunkSink` (staged in the store,
/// never held in memory), verified, made durable and completed as soon as its last byte is in, exactly as a
/// creation, a chunk and a completion would: each file is its own object, visible only once complete. A file whose
/// bytes the receiver already holds for this client (its content id, dedup) is hashed as it arrives and, when the
/// bytes are that object's, completed from it without storing them again. A file that fails (its digest, a limit)
/// is cancelled and the rest go on; the answer, after the last byte, names a receipt or a problem per file. A body cut
/// short gets no answer: the files completed before the cut stay complete, the one under way is cancelled.
final class BatchBodySink: HTTPRequestSink, @unchecked Sendable {
    // @unchecked: the server calls a sink from one connection thread, one call at a time.
    private enum Current {
        case storing(UploadID, ChunkSink)
        case skipping(ReceiverError)
    }

    private let engine: UploadEngine
    private let context: ReceiverContext
    private let owner: ClientIdentity
    private let header: AetherBatchHeader
    private let contentLength: Int64
    private var document: [UInt8] = []
    private var files: [NativeBatchRequest.File] = []
    private var parsed = false
    private var position = 0
    private var written: Int64 = 0
    private var current: Current?
    private var results: [NativeBatchAnswer.Result] = []
    private var failure: ReceiverError?
    private var received: Int64 = 0

    init(context: ReceiverContext, owner: ClientIdentity, header: AetherBatchHeader, contentLength: Int64) {
        self.engine = context.engine
        self.context = context
        self.owner = owner
        self.header = header
        self.contentLength = contentLength
        document.reserveCapacity(header.document)
    }

    func receive(_ piece: UnsafeRawBufferPointer) {
        received += Int64(piece.count)
        var offset = 0
        if !parsed, failure == nil {
            let take = min(piece.count, header.document - document.count)
            unsafe document.append(contentsOf: UnsafeRawBufferPointer(rebasing: piece[0..<take]))
            offset = take
            if document.count == header.document { parseDocument() }
        }
        while failure == nil, parsed, offset < piece.count {
            guard position < files.count else {
                failure = ReceiverError(.lengthMismatch, "the body is longer than the batch's files")
                return
            }
            let file = files[position]
            if current == nil { begin(file) }
            let take = Int(min(Int64(piece.count - offset), file.create.size - written))
            unsafe feed(UnsafeRawBufferPointer(rebasing: piece[offset..<offset + take]))
            written += Int64(take)
            offset += take
            if written == file.create.size { end(file) }
        }
    }

    func finish() -> HTTPServerResponse {
        if failure == nil, !parsed {
            failure = ReceiverError(.lengthMismatch, "the body ended inside the batch's document")
        }
        if failure == nil, position < files.count {
            cancelCurrent()
            failure = ReceiverError(.lengthMismatch, "the body ended inside file \(position) of the batch")
        }
        context.metrics.bytesReceived(received)
        if let failure {
            // Only the document can fail the whole batch (the body's length was checked against it before any file
            // was created), so no file of this batch is stored when this is answered.
            return NativeHandler.problem(failure)
        }
        context.metrics.batchAnswered(files: files.count)
        return NativeHandler.json(
            200, NativeBatchAnswer(files: results).jsonBytes, type: AetherWire.batchReceiptMediaType)
    }

    /// The body was cut: the files completed stay; the one under way is cancelled (a batch is sent again whole).
    func interrupted() { cancelCurrent() }

    // MARK: The document

    private func parseDocument() {
        do throws(ReceiverError) {
            let request: NativeBatchRequest
            do throws(AetherProtocolError) {
                request = try NativeBatchRequest(json: document)
            } catch {
                throw ReceiverError(.malformedRequest, "the batch document: \(error.message)")
            }
            guard request.files.count == header.files else {
                throw ReceiverError(
                    .malformedRequest,
                    "the batch document lists \(request.files.count) files, \(AetherWire.batchField) says \(header.files)"
                )
            }
            guard Int64(header.document) + request.fileBytes == contentLength else {
                throw ReceiverError(
                    .lengthMismatch,
                    "the body is \(contentLength) bytes, the document and its files \(Int64(header.document) + request.fileBytes)"
                )
            }
            files = request.files
            parsed = true
            document = []
            settleEmptyFiles()
        } catch {
            failure = error
        }
    }

    // MARK: One file

    /// Creates the upload of `file` and opens where its bytes go.
    private func begin(_ file: NativeBatchRequest.File) {
        written = 0
        do throws(ReceiverError) {
            let create = file.create
            let record = try engine.create(
                NewUpload(
                    uploadProtocol: .native, size: create.size, chunkSize: Int(create.chunkSize), chunks: 1,
                    chainSessionID: create.chainSessionID, contentID: create.contentID,
                    metadata: create.metadata.mapValues { Array($0.utf8) }),
                owner: owner)
            context.metrics.uploadStarted("native")
            do throws(ReceiverError) {
                let sink = try engine.openChunk(
                    record.id, index: 0,
                    descriptor: ChunkDescriptor(
                        length: Int(create.size), crc32c: file.crc32c, sha256: file.sha256, link: file.chainHead),
                    owner: owner)
                current = .storing(record.id, sink)
            } catch {
                try? engine.cancel(record.id, owner: owner)
                throw error
            }
        } catch {
            current = .skipping(error)
        }
    }

    private func feed(_ piece: UnsafeRawBufferPointer) {
        switch current {
        case .storing(let id, let sink):
            do throws(ReceiverError) {
                try unsafe sink.write(piece)
            } catch {
                try? engine.cancel(id, owner: owner)
                current = .skipping(error)
            }
        case .skipping, nil: break
        }
    }

    /// The file's last byte is in: store and complete it, or record why not.
    private func end(_ file: NativeBatchRequest.File) {
        let claim = CompletionClaim(chainHead: file.chainHead, fileSHA256: file.sha256, merkleRoot: file.merkleRoot)
        var id: UploadID?
        do throws(ReceiverError) {
            let receipt: UploadReceiptRecord
            switch current {
            case .storing(let upload, let sink):
                id = upload
                _ = try sink.finish()
                // The bytes are stored and verified; a held object of the same bytes (intact) is kept once instead.
                if file.create.contentID != nil,
                    let held = try engine.completeFromHeld(upload, owner: owner, sha256: file.sha256)
                {
                    receipt = held
                } else {
                    receipt = try engine.complete(upload, owner: owner, claim: claim)
                }
            case .skipping(let error):
                throw error
            case nil:
                throw ReceiverError(.storageFailed, "the file was never opened")
            }
            guard receipt.chainHead == file.chainHead, receipt.merkleRoot == file.merkleRoot else {
                throw ReceiverError(
                    .merkleMismatch, "the stored file's Merkle root or chain head differs from the claim")
            }
            context.metrics.uploadCompleted("native")
            results.append(
                .stored(location: "/uploads/\(receipt.id)", receipt: NativeHandler.receiptDocument(receipt)))
        } catch {
            if [.digestMismatch, .lengthMismatch, .merkleMismatch, .chainBroken].contains(error.code) {
                context.metrics.verifyFailed()
            }
            if let id { try? engine.cancel(id, owner: owner) }
            results.append(.failed(NativeHandler.problemDocument(error)))
        }
        current = nil
        position += 1
        written = 0
        settleEmptyFiles()
    }

    /// Empty files have no bytes to wait for: each is created and completed when its turn comes.
    private func settleEmptyFiles() {
        while position < files.count, files[position].create.size == 0 {
            begin(files[position])
            end(files[position])
        }
    }

    private func cancelCurrent() {
        switch current {
        case .storing(let id, let sink):
            _ = sink.interrupted()
            try? engine.cancel(id, owner: owner)
        case .skipping, nil: break
        }
        current = nil
    }
}
