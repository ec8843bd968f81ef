/// Native uploads created without a size (`docs/PROTOCOL.md` 3.1, `"size":null`: a file still being written,
/// `aether upload --follow`). Until completion the record has no size and no chunk count: chunks of at most
/// `chunkSize` bytes are taken at any index below the chunk limit whose bytes fit the object limit, the chain is
/// checked as the stored prefix grows, and the completion's `size` fixes the layout. Every stored chunk must then
/// have the length that layout gives it and none may lie past the end; otherwise the completion is refused and
/// the upload stays open, so no object is ever assembled from a mix.
extension UploadEngine {
    /// The layout checks of a size-unknown native creation: chunk size and session as usual, no parity (its groups
    /// need the chunk count) and no content id (dedup needs the whole object).
    func deferredNativeLayout(_ request: NewUpload) throws(ReceiverError) -> (
        chunkSize: Int, chunks: Int, session: String
    ) {
        let chunkSize = try checkedChunkSize(request)
        guard let session = request.chainSessionID, (1...256).contains(session.utf8.count) else {
            throw ReceiverError(.malformedRequest, "chainSessionID must be 1 to 256 UTF-8 bytes")
        }
        guard request.parity == nil, request.contentID == nil else {
            throw ReceiverError(.malformedRequest, "an upload without a size takes no parity and no contentID")
        }
        return (chunkSize, 0, session)
    }

    /// The limits on a chunk of a size-unknown upload: an index below the chunk limit, at most `chunkSize` bytes,
    /// and an end within the object limit.
    func checkDeferredChunk(_ record: UploadRecord, index: Int, length: Int) throws(ReceiverError) {
        guard index >= 0, index < limits.maximumChunks else {
            throw ReceiverError(
                .tooLarge, "chunk index \(index) is outside the limit of \(limits.maximumChunks) chunks", chunk: index)
        }
        guard length >= 0, length <= record.chunkSize else {
            throw ReceiverError(
                .lengthMismatch, "chunk \(index) is at most \(record.chunkSize) bytes, \(length) were declared",
                chunk: index)
        }
        guard Int64(index) * Int64(record.chunkSize) + Int64(length) <= limits.maximumObjectSize else {
            throw ReceiverError(
                .tooLarge, "chunk \(index) ends past the object limit of \(limits.maximumObjectSize) bytes",
                chunk: index)
        }
    }

    /// How far the chain may be checked: the chunk count, or the chunk limit while the size is unknown.
    func chainBound(_ record: UploadRecord) -> Int {
        record.uploadProtocol == .native && record.size == nil ? limits.maximumChunks : record.chunks
    }

    /// The bitmap's length in a status: the chunk count, or while the size is unknown the highest stored index + 1.
    func receivedExtent(_ record: UploadRecord) throws(ReceiverError) -> Int {
        guard record.size == nil, record.state == .open else { return record.chunks }
        return (try catalog.chunkReceipts(record.id).map(\.index).max() ?? -1) + 1
    }

    /// The record with its final size and chunk count from the completion's `size` (not yet saved: the completion
    /// records it with the receipt). A known size must equal a claimed one.
    func settledSize(_ record: UploadRecord, claimed: Int64?, receipts: [ChunkReceipt]) throws(ReceiverError)
        -> UploadRecord
    {
        guard record.size == nil else {
            if let claimed, claimed != record.size {
                throw ReceiverError(.malformedRequest, "the completion's size differs from the upload's")
            }
            return record
        }
        guard let size = claimed else {
            throw ReceiverError(.malformedRequest, "an upload created without a size needs size at completion")
        }
        guard size >= 0, size <= limits.maximumObjectSize else {
            throw ReceiverError(.tooLarge, "the size is over the limit of \(limits.maximumObjectSize) bytes")
        }
        var settled = record
        settled.size = size
        settled.chunks = size == 0 ? 1 : Int((size + Int64(record.chunkSize) - 1) / Int64(record.chunkSize))
        guard settled.chunks <= limits.maximumChunks else {
            throw ReceiverError(.tooLarge, "\(settled.chunks) chunks are over the limit of \(limits.maximumChunks)")
        }
        for receipt in receipts {
            guard receipt.index < settled.chunks else {
                throw ReceiverError(
                    .lengthMismatch, "chunk \(receipt.index) lies past the end of \(size) bytes", chunk: receipt.index)
            }
            let expected = Self.chunkLength(index: receipt.index, record: settled)
            guard receipt.length == expected else {
                throw ReceiverError(
                    .lengthMismatch, "chunk \(receipt.index) is \(receipt.length) bytes, \(expected) for \(size) bytes",
                    chunk: receipt.index)
            }
        }
        return settled
    }
}
