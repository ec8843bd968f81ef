import AetherIO
import AetherIntegrity
import AetherTransport

extension NativeHandler {
    /// The largest capture manifest checked and served (about 64,000 files; a larger one is refused with 413).
    static let maximumCaptureBytes = 16 << 20

    /// `GET /uploads/{id}/capture` (`docs/PROTOCOL.md` 3.11): the complete native upload `id` read as a capture
    /// manifest (`CaptureManifest.parse`: strict, its root recomputed from its files) and checked against what this
    /// receiver holds: every file's location names an upload of this client here, complete, whose receipt (the
    /// receiver's own computation from stored bytes) has the file's size, SHA-256 and Merkle root. Then the manifest's
    /// bytes, with `Aether-Capture-Root`; otherwise 409 `capture-mismatch` naming the first file that differs. Checked
    /// on every request, so the answer says what the receiver holds now.
    static func capture(_ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity, context: ReceiverContext)
        -> HTTPServerResponse
    {
        do throws(ReceiverError) {
            let engine = context.engine
            let status = try engine.status(id, owner: owner)
            guard status.record.uploadProtocol == .native, status.isComplete, let size = status.record.size else {
                throw ReceiverError(.incomplete, "a capture manifest is read from a complete native upload")
            }
            guard size <= Int64(maximumCaptureBytes) else {
                throw ReceiverError(.tooLarge, "the upload is larger than a capture manifest checked here (16 MiB)")
            }
            let bytes = try engine.objectBytes(id, size: size)
            let manifest: CaptureManifest
            do {
                manifest = try CaptureManifest.parse(bytes)
            } catch {
                throw ReceiverError(.captureMismatch, "the upload is not a capture manifest: \(error.message)")
            }
            for (index, file) in manifest.files.enumerated() {
                let shown = "file \(index) of the capture"
                let path = file.location.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
                let segments = path.split(separator: "/")
                guard segments.count >= 2, segments[segments.count - 2] == "uploads",
                    let fileID = try? UploadID(String(segments[segments.count - 1]))
                else {
                    throw ReceiverError(.captureMismatch, "\(shown) is not at a native upload of a receiver")
                }
                let held: UploadStatus
                do {
                    held = try engine.status(fileID, owner: owner)
                } catch {
                    throw ReceiverError(.captureMismatch, "\(shown): its upload is not held here (\(error.code.name))")
                }
                guard held.isComplete, let receipt = held.receipt else {
                    throw ReceiverError(.captureMismatch, "\(shown): its upload is not complete")
                }
                guard receipt.size == file.size, receipt.fileSHA256.hex == file.sha256,
                    receipt.merkleRoot.hex == file.merkleRoot
                else {
                    throw ReceiverError(
                        .captureMismatch, "\(shown): the receipt of its upload has another size or digests")
                }
            }
            var response = json(200, bytes, type: AetherWire.captureMediaType)
            response.add(AetherWire.captureRootField, manifest.root.hex)
            response.add("Cache-Control", "no-store")
            return response
        } catch {
            return problem(error)
        }
    }
}
