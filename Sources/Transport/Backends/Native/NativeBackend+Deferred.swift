extension NativeBackend {
    /// The create request of an upload whose size is known only at completion (`docs/PROTOCOL.md` 3.1, the
    /// size-unknown form): no parity (its groups need the chunk count) and no content id (dedup needs the whole
    /// object). The receiver's chunk-size limits still apply; its object and chunk-count limits apply as it grows.
    func deferredCreateRequest(_ description: UploadDescription) throws(TransportError) -> NativeCreateRequest {
        guard options.parity == nil, description.contentID == nil else {
            throw TransportError(
                .invalidArgument, "an upload of unknown size takes no parity and no content id (dedup)")
        }
        let request = NativeCreateRequest.deferred(
            chunkSize: description.layout.partSize, chainSessionID: description.chainSessionID)
        do { try request.validate() } catch {
            throw TransportError(.invalidArgument, "the create request is invalid\(Self.memberNote(error))")
        }
        guard (server.minimumChunkSize...server.maximumChunkSize).contains(request.chunkSize) else {
            throw TransportError(
                .invalidArgument,
                "the chunk size \(request.chunkSize) is outside the receiver's \(server.minimumChunkSize)..."
                    + "\(server.maximumChunkSize)")
        }
        return request
    }
}
