public import AetherIO

/// An Aether Content Identifier: version, hash algorithm and digest of a file's bytes.
///
/// Text form `aci:<version>:sha256:<64 lowercase hex>`, e.g. `aci:1:sha256:e3b0...b855`.
/// Validation is strict: version 1, algorithm exactly `sha256`, exactly 64 lowercase hex digits
/// (uppercase, short, long or non-hex digests throw `.malformedIdentifier`).
public struct ACI: Sendable, Hashable, CustomStringConvertible {
    /// The only version defined.
    public static let currentVersion = 1
    /// The only algorithm defined.
    public static let sha256Algorithm = "sha256"

    /// Format version (1).
    public let version: Int
    /// Hash algorithm name (`sha256`).
    public let algorithm: String
    /// The file's SHA-256.
    public let digest: Digest32

    /// The ACI of a file with SHA-256 `digest`.
    public init(digest: Digest32) {
        version = Self.currentVersion
        algorithm = Self.sha256Algorithm
        self.digest = digest
    }

    /// Validates the three components.
    public init(version: Int, algorithm: String, digestHex: String) throws(IntegrityError) {
        guard version == Self.currentVersion else {
            throw IntegrityError(.malformedIdentifier, "ACI version \(version) is not supported (expected 1)")
        }
        guard algorithm == Self.sha256Algorithm else {
            throw IntegrityError(.malformedIdentifier, "ACI algorithm must be \"sha256\"")
        }
        self.init(digest: try DigestHex.parse(digestHex))
    }

    /// Parses the text form strictly.
    public init(parsing text: String) throws(IntegrityError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "aci", let version = Int(parts[1]), String(version) == parts[1] else {
            throw IntegrityError(.malformedIdentifier, "an ACI reads aci:<version>:sha256:<hex>")
        }
        try self.init(version: version, algorithm: String(parts[2]), digestHex: String(parts[3]))
    }

    /// `aci:1:sha256:<hex>`.
    public var description: String { "aci:\(version):\(algorithm):\(digest.hex)" }
}
