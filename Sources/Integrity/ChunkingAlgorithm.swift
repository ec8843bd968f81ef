/// How a file was cut into chunks. Only fixed-size chunking is implemented; the others are
/// reserved names so that manifests and CIDs from a future version fail with a clear
/// `.unsupported` error instead of being misread.
public enum ChunkingAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// Every chunk has the manifest's chunk size except the last.
    case fixed = "fixed"
    /// Content-defined chunking (reserved, not implemented).
    case fastCDC = "fastcdc"
    /// Rateless fountain coding (reserved, not implemented).
    case raptor = "raptor"

    /// Whether this build can verify files chunked this way.
    public var isImplemented: Bool { self == .fixed }

    /// Parses a name: `.unsupported` for a reserved one, `.malformedManifest` for an unknown one.
    public static func parse(_ name: String) throws(IntegrityError) -> ChunkingAlgorithm {
        guard let algorithm = ChunkingAlgorithm(rawValue: name) else {
            throw IntegrityError(.malformedManifest, "unknown chunking algorithm \"\(name)\"")
        }
        guard algorithm.isImplemented else {
            throw IntegrityError(.unsupported, "chunking algorithm \"\(name)\" is reserved and not supported")
        }
        return algorithm
    }
}
