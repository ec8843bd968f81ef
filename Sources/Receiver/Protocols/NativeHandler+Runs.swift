import AetherIO
import AetherTransport

extension NativeHandler {
    /// Whether a chunk `PUT` carries a run (its `Aether-Chunk` has a `count`).
    static func isRun(_ request: HTTPServerRequest) -> Bool {
        guard let field = request.header(AetherWire.chunkField) else { return false }
        return AetherRunHeader.isRun(field)
    }

    /// `PUT /uploads/{id}/chunks/{first}` with a run header (section 3.2.1): checked before any byte is read (count
    /// within `max-run`, the chunks within the upload, the length their sum, no content coding), then streamed into
    /// a `RunBodySink`.
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
            if let length = RequestFields.contentLength(request), length != total {
                throw ReceiverError(.lengthMismatch, "the body is not the run's \(total) bytes", chunk: first)
            }
            return .stream(
                RunBodySink(context: context, id: id, owner: owner, first: first, header: header, lengths: lengths))
        } catch {
            return .respond(problem(error))
        }
    }
}
