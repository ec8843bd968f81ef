/// The wire protocol an upload was created with.
public enum UploadProtocol: String, Sendable, Hashable, CaseIterable {
    /// `aether/1`: indexed chunks, parity, challenges (`docs/PROTOCOL.md` section 3).
    case native
    /// IETF resumable upload (section 4): one byte stream appended in order.
    case ietf
    /// tus 1.0 (section 5): one byte stream appended in order.
    case tus

    /// Whether the upload is a byte stream appended at offsets (IETF, tus) rather than indexed chunks.
    public var isByteStream: Bool { self != .native }
}
