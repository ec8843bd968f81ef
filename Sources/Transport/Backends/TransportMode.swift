/// The upload protocol a destination is reached with (the spec's `TransportMode`, with tus added).
///
/// `description` is the name the command line prints and `--protocol` takes: `native`, `ietf`, `tus`, `s3`.
public enum TransportMode: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Aether's own `aether/1` (the spec's `pr9Native`): docs/PROTOCOL.md sections 2 and 3.
    case native
    /// IETF resumable upload (draft-ietf-httpbis-resumable-upload): docs/PROTOCOL.md section 4.
    case ietfResumable
    /// tus 1.0: docs/PROTOCOL.md section 5.
    case tus
    /// S3 multipart upload (AWS S3, R2, MinIO, Ceph): docs/PROTOCOL.md section 8.
    case s3Multipart

    /// The order a client prefers among the protocols one HTTP server offers (docs/PROTOCOL.md section 1).
    public static let httpPreference: [TransportMode] = [.native, .ietfResumable, .tus]

    /// Parses a name as `description` prints it (`native`, `ietf`, `tus`, `s3`; case ignored).
    /// Anything else is `.invalidArgument` naming the accepted names.
    public init(name: String) throws(TransportError) {
        guard let mode = Self.allCases.first(where: { $0.description == name.lowercased() }) else {
            throw TransportError(
                .invalidArgument,
                "unknown protocol \(String(name.prefix(32)).debugDescription); use one of native, ietf, tus, s3")
        }
        self = mode
    }

    public var description: String {
        switch self {
        case .native: "native"
        case .ietfResumable: "ietf"
        case .tus: "tus"
        case .s3Multipart: "s3"
        }
    }
}
