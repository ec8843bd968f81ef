/// What a tus server said about itself in its `OPTIONS` answer (tus 1.0.0 "OPTIONS", "Protocol Extensions").
public struct TusServerInfo: Sendable, Hashable {
    /// The one version this client speaks.
    public static let version = "1.0.0"

    /// `Tus-Version`, in the server's order of preference.
    public let versions: [String]
    /// `Tus-Extension` (empty when the header is absent).
    public let extensions: Set<String>
    /// `Tus-Max-Size`, when the server gave it.
    public let maximumSize: Int64?
    /// `Tus-Checksum-Algorithm`, in the server's order (empty without the checksum extension).
    public let checksumAlgorithms: [String]

    /// Reads the headers of a 200 or 204 answer to `OPTIONS`. No `Tus-Version` is `.protocolViolation` (not a tus
    /// server); a list without 1.0.0 is `.versionUnsupported`; a malformed `Tus-Max-Size` is `.protocolViolation`.
    public init(headers: HTTPHeaders) throws(TransportError) {
        guard let versionHeader = headers["Tus-Version"] else {
            throw TransportError(.protocolViolation, "the OPTIONS answer has no Tus-Version: not a tus server")
        }
        versions = Self.list(versionHeader)
        guard versions.contains(Self.version) else {
            throw TransportError(
                .versionUnsupported,
                "the tus server speaks \(String(versionHeader.prefix(64))), not \(Self.version)")
        }
        extensions = Set(headers.values("Tus-Extension").flatMap(Self.list))
        if let size = headers["Tus-Max-Size"] {
            guard let value = TusBackend.integer(size) else {
                throw TransportError(.protocolViolation, "Tus-Max-Size is not a non-negative integer")
            }
            maximumSize = value
        } else {
            maximumSize = nil
        }
        checksumAlgorithms = headers.values("Tus-Checksum-Algorithm").flatMap(Self.list)
    }

    /// Whether the server listed `name` in `Tus-Extension`.
    public func offers(_ name: String) -> Bool { extensions.contains(name) }

    /// The algorithm this client will put in `Upload-Checksum`: the first of `preferred` that the server lists,
    /// or nil without the checksum extension or a common algorithm.
    public func checksumAlgorithm(preferring preferred: [TusChecksumAlgorithm]) -> TusChecksumAlgorithm? {
        guard offers("checksum") else { return nil }
        return preferred.first { checksumAlgorithms.contains($0.rawValue) }
    }

    /// Whether uploads go as partial uploads concatenated at the end (parallel, any order).
    public func usesConcatenation(_ options: TusBackendOptions) -> Bool {
        options.useConcatenation && offers("concatenation") && options.maximumConcatenatedParts > 1
    }

    /// The capabilities these answers allow: parallel and out-of-order parts only with concatenation (each part
    /// its own partial upload); otherwise one PATCH after another at the server's offset.
    public func capabilities(_ options: TusBackendOptions) -> BackendCapabilities {
        let concatenation = usesConcatenation(options)
        let objectLimit = maximumSize ?? Int64.max
        let checksums = checksumAlgorithm(preferring: options.checksumAlgorithms).map { Set([$0.kind]) } ?? []
        return BackendCapabilities(
            minimumPartSize: 1, maximumPartSize: max(1, min(options.maximumPartSize, objectLimit)),
            maximumParts: concatenation ? options.maximumConcatenatedParts : Int(Int32.max), equalParts: false,
            parallelParts: concatenation, outOfOrderParts: concatenation, checksums: checksums,
            resumeQuery: concatenation ? .parts : .offset, maximumObjectSize: objectLimit)
    }

    private static func list(_ header: String) -> [String] {
        header.split(separator: ",").map { String($0).trimmingASCIISpaces() }.filter { !$0.isEmpty }
    }
}
