/// One upload protocol spoken to one destination (native `aether/1`, IETF resumable upload, tus 1.0, S3
/// multipart). The Uploader drives every backend the same way: `create` once, `send` each part of a
/// `PartLayout` (in parallel and out of order only where `capabilities` allow), `progress` after an
/// interruption to learn what is stored, then `complete` (or `abort`). Every failure is a typed
/// `TransportError`; a backend never retries on its own beyond what its protocol prescribes (S3 SlowDown).
public protocol UploadBackend: Sendable {
    /// What this backend accepts; parts are re-blocked to satisfy it.
    var capabilities: BackendCapabilities { get }

    /// What this backend offers beyond this protocol; see the default in the extension.
    var features: BackendFeatures { get }

    /// Creates the upload at the destination.
    func create(_ description: UploadDescription) async throws(TransportError) -> RemoteUpload

    /// Creates the upload and sends its first part (index 0); see the default in the extension.
    func create(_ description: UploadDescription, sending firstPart: UploadPart) async throws(TransportError)
        -> (upload: RemoteUpload, receipt: PartReceipt)

    /// What the destination holds of `upload` now.
    func progress(of upload: RemoteUpload) async throws(TransportError) -> RemoteProgress

    /// Sends one part; returns only after the destination acknowledged it.
    func send(_ part: UploadPart, to upload: RemoteUpload) async throws(TransportError) -> PartReceipt

    /// Finishes the upload after every part was acknowledged.
    func complete(_ upload: RemoteUpload, summary: CompletionSummary) async throws(TransportError) -> UploadReceipt

    /// Abandons the upload and asks the destination to drop what it holds.
    func abort(_ upload: RemoteUpload) async throws(TransportError)
}

extension UploadBackend {
    /// No features beyond this protocol.
    public var features: BackendFeatures { BackendFeatures() }

    /// Creates the upload and sends its first part, in one request where the protocol allows it (tus
    /// creation-with-upload, IETF creation with a body). This default creates, then sends.
    public func create(_ description: UploadDescription, sending firstPart: UploadPart) async throws(TransportError)
        -> (upload: RemoteUpload, receipt: PartReceipt)
    {
        let upload = try await create(description)
        let receipt = try await send(firstPart, to: upload)
        return (upload, receipt)
    }
}
