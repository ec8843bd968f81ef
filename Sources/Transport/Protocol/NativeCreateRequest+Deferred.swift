extension NativeCreateRequest {
    /// A request for an upload whose size is known only at completion (`"size":null`, no `chunks`).
    package static func deferred(
        chunkSize: Int64, chainSessionID: String, contentID: String? = nil
    ) -> NativeCreateRequest {
        var request = NativeCreateRequest(
            size: 0, chunkSize: chunkSize, chunks: 0, chainSessionID: chainSessionID, contentID: contentID)
        request.sizeDeferred = true
        return request
    }

    /// The rules of the size-unknown form: a valid chunk size and session, no parity (its groups need the chunk
    /// count) and no content id (it needs the whole object).
    func validateDeferred() throws(AetherProtocolError) {
        guard chunkSize > 0, chunkSize <= AetherWire.maximumInteger, chunkSize % AetherWire.chunkAlignment == 0 else {
            throw AetherProtocolError(
                .outOfRange, member: "chunkSize", "chunkSize is not a positive multiple of 16 KiB")
        }
        guard (1...256).contains(chainSessionID.utf8.count) else {
            throw AetherProtocolError(.outOfRange, member: "chainSessionID", "chainSessionID is not 1...256 bytes")
        }
        guard parity == nil else {
            throw AetherProtocolError(.inconsistent, member: "parity", "parity needs a known size")
        }
        guard contentID == nil else {
            throw AetherProtocolError(.inconsistent, member: "contentID", "contentID needs a known size")
        }
    }
}
