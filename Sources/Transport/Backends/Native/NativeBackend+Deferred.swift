extension NativeBackend {
    /// The create request of an upload whose size is known only at completion (`docs/PROTOCOL.md` 3.1, the
    /// size-unknown form): no parity (its groups need the chunk count) and no content id (dedup needs the whole
    /// object). The receiver's chunk-size limits still apply; its object and chunk-count limits apply as it grows.
    func deferredCreateRequest(_ description: UploadDescription) throws(TransportError) -> NativeCreateRequest {
        guard options.parity == nil, description.contentID == nil else {
            throw TransportError(
                .invalidArgument, "an upload of unknown size takes no parity and no content id (dedup)")
        }
        var request = NativeCreateRequest.deferred(
            chunkSize: description.layout.partSize, chainSessionID: description.chainSessionID)
        if server.metadata { request.metadata = Self.keptMetadata(description.metadata) }
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

    /// The entries of `metadata` the create request can carry (`NativeCreateRequest.metadata`'s rules): those
    /// with a valid name and a value within the bound, at most the most entries, by name. The rest are not sent
    /// (the upload is the same without them).
    static func keptMetadata(_ metadata: [String: String]) -> [String: String] {
        var kept: [String: String] = [:]
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
            guard kept.count < NativeCreateRequest.maximumMetadataEntries else { break }
            var probe = NativeCreateRequest(size: 0, chunkSize: 16 << 10, chunks: 1, chainSessionID: "probe")
            probe.metadata = [name: value]
            if (try? probe.validate()) != nil { kept[name] = value }
        }
        return kept
    }
}
