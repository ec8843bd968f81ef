public import AetherIO

/// A CIDv1 for raw bytes hashed with SHA-256, as IPFS and the `multiformats` libraries write it:
/// multibase `b` (base32 lowercase, no padding) of `0x01` (CID version) `0x55` (raw codec)
/// `0x12 0x20` (sha2-256 multihash, 32 bytes) and the digest. Such CIDs start with `bafkrei`.
///
/// Parsing is strict: another multibase (including uppercase `B` or a CIDv0 `Qm...`), another
/// version, codec or hash, a wrong digest length, non-canonical base32 or trailing bytes all throw
/// `.malformedIdentifier` with a message saying which.
public struct CIDv1: Sendable, Hashable, CustomStringConvertible {
    /// Multicodec code of raw bytes.
    public static let rawCodec: UInt8 = 0x55
    /// Multihash code of SHA2-256.
    public static let sha256Code: UInt8 = 0x12

    /// The SHA-256 of the content.
    public let digest: Digest32

    /// The CID of content with SHA-256 `digest`.
    public init(digest: Digest32) { self.digest = digest }

    /// The binary CID (36 bytes).
    public var bytes: [UInt8] { [0x01, Self.rawCodec, Self.sha256Code, 0x20] + digest.bytes }

    /// The multibase text form (`b` + base32).
    public var string: String { "b" + Base32.encode(bytes) }

    /// The multibase text form.
    public var description: String { string }

    /// Parses the text form strictly.
    public init(string text: String) throws(IntegrityError) {
        guard let prefix = text.utf8.first else { throw IntegrityError(.malformedIdentifier, "empty CID") }
        guard prefix == UInt8(ascii: "b") else {
            throw IntegrityError(
                .malformedIdentifier,
                "CID multibase must be \"b\" (base32 lowercase), got \"\(Character(Unicode.Scalar(prefix)))\"")
        }
        try self.init(bytes: try Base32.decode(text.dropFirst()))
    }

    /// Parses the binary form strictly.
    public init(bytes: [UInt8]) throws(IntegrityError) {
        guard bytes.count >= 4 else { throw IntegrityError(.malformedIdentifier, "CID is too short") }
        guard bytes[0] == 0x01 else {
            throw IntegrityError(.malformedIdentifier, "not a CIDv1 (version byte \(bytes[0]))")
        }
        guard bytes[1] == Self.rawCodec else {
            throw IntegrityError(
                .malformedIdentifier, "CID codec must be raw (0x55), got 0x\(String(bytes[1], radix: 16))")
        }
        guard bytes[2] == Self.sha256Code else {
            throw IntegrityError(
                .malformedIdentifier, "CID hash must be sha2-256 (0x12), got 0x\(String(bytes[2], radix: 16))")
        }
        guard bytes[3] == 0x20 else {
            throw IntegrityError(.malformedIdentifier, "sha2-256 multihash length must be 32, got \(bytes[3])")
        }
        guard bytes.count == 36 else {
            throw IntegrityError(
                .malformedIdentifier,
                bytes.count < 36 ? "CID digest is truncated" : "CID has \(bytes.count - 36) trailing bytes")
        }
        do { self.digest = try Digest32(bytes: bytes[4...]) } catch {
            throw IntegrityError(.malformedIdentifier, "CID digest is not 32 bytes")
        }
    }
}
