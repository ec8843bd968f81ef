/// What `BackendDetector` found for one destination: the protocol chosen, a backend speaking it, what the server
/// offered, and why a more preferred protocol was passed over.
public struct DetectedBackend: Sendable {
    /// The protocol chosen.
    public let mode: TransportMode
    /// A backend for the destination, speaking `mode`.
    public let backend: any UploadBackend
    /// The server's answer to `OPTIONS`; nil for an `s3://` destination (nothing is asked).
    package let offer: ProtocolOffer?
    /// Why a protocol the server preferred was not chosen (native offered but not spoken by this build), or nil.
    public let fallbackReason: String?
    /// Where the upload's requests go (the URL probed, or the S3 object's URL at its endpoint): the origin whose
    /// connections are worth opening ahead.
    public let origin: String

    /// A result from its parts.
    package init(
        mode: TransportMode, backend: any UploadBackend, offer: ProtocolOffer?, fallbackReason: String?, origin: String
    ) {
        self.origin = origin
        self.mode = mode
        self.backend = backend
        self.offer = offer
        self.fallbackReason = fallbackReason
    }
}
