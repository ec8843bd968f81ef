import AetherIO
import AetherTransport

extension NativeHandler {
    /// Whether a chunk `PUT` carries a run (its `Aether-Chunk` has a `count`).
    static func isRun(_ request: HTTPServerRequest) -> Bool {
        guard let field = request.header(AetherWire.chunkField) else { return false }
        return AetherRunHeader.isRun(field)
    }

    /// `PUT /uploads/{id}/chunks/{first}` with a run header (section 3.2.1): checked before any byte is read (count
    /// within `max-run`, the chunks within the upload, the length their sum, no content coding; for a continuation,
    /// section 3.2.2, the partial it continues), then streamed into a `RunBodySink`.
    static func run(
        _ request: HTTPServerRequest, id: UploadID, first: Int, owner: ClientIdentity, context: ReceiverContext
    ) -> HTTPRequestStart {
        do throws(ReceiverError) {
            let header: AetherRunHeader
            do throws(AetherProtocolError) {
                header = try AetherRunHeader(parsing: request.header(AetherWire.chunkField) ?? "")
            } catch {
                throw ReceiverError(.malformedRequest, "\(AetherWire.chunkField): \(error.message)", chunk: first)
            }
            let maximum = context.engine.limits.maximumRunChunks
            guard header.count <= maximum else {
                throw ReceiverError(
                    .tooLarge, "a run of \(header.count) chunks is more than the \(maximum) advertised", chunk: first)
            }
            if let coding = request.header("Content-Encoding"), coding.lowercased() != "identity" {
                throw ReceiverError(.unsupportedMediaType, "a run travels without a content coding", chunk: first)
            }
            let record = try context.engine.status(id, owner: owner).record
            guard record.uploadProtocol == .native else {
                throw ReceiverError(.malformedRequest, "only a native upload takes chunks", chunk: first)
            }
            guard first < record.chunks, header.count <= record.chunks - first else {
                throw ReceiverError(
                    .malformedRequest, "the run \(first)+\(header.count) is outside 0..<\(record.chunks)", chunk: first)
            }
            let lengths = (first..<first + header.count).map { UploadEngine.chunkLength(index: $0, record: record) }
            let total = lengths.reduce(Int64(0)) { $0 + Int64($1) }
            guard header.length == total else {
                throw ReceiverError(
                    .lengthMismatch, "the run's chunks hold \(total) bytes, \(header.length) were declared",
                    chunk: first)
            }
            let from = Int(header.from ?? 0)
            if let length = RequestFields.contentLength(request), length != total - Int64(from) {
                throw ReceiverError(
                    .lengthMismatch, "the body is not the run's \(total - Int64(from)) bytes", chunk: first)
            }
            guard from < lengths[0] else {
                throw ReceiverError(
                    .malformedRequest, "a continuation starts inside chunk \(first), not at byte \(from)", chunk: first)
            }
            // A continuation (section 3.2.2) is checked against the partial before any byte is read: the chunk is
            // claimed now, and a receiver holding another prefix answers 409 with what it holds.
            var continuing: ChunkSink?
            if from > 0 {
                continuing = try context.engine.openChunk(
                    id, index: first, descriptor: descriptor(header, lengths: lengths, position: 0), owner: owner,
                    from: from)
                context.metrics.continuationStarted()
            }
            return .stream(
                RunBodySink(
                    context: context, id: id, owner: owner, first: first, header: header, lengths: lengths,
                    continuing: continuing, from: from))
        } catch {
            if error.code == .partialMismatch, let index = error.chunk {
                let held = AetherPartialHeader(index: index, received: error.offset ?? 0)
                return .respond(
                    ProblemResponse.make(error, headers: protocolHeaders + [(AetherWire.partialField, held.fieldValue)])
                )
            }
            return .respond(problem(error))
        }
    }

    /// The descriptor of the run's chunk at `position` (the link only on the last).
    static func descriptor(_ header: AetherRunHeader, lengths: [Int], position: Int) -> ChunkDescriptor {
        ChunkDescriptor(
            length: lengths[position], crc32c: header.crc32c[position], sha256: header.sha256[position],
            link: position == lengths.count - 1 ? header.link : nil)
    }
}
