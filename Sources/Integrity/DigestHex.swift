public import AetherIO

/// Strict text forms of digests: exactly 64 lowercase hex digits, as canonical encodings require.
///
/// A parse failure is an error (`.malformedIdentifier`), never "not equal" (BUG-18).
public enum DigestHex {
    /// Parses exactly 64 lowercase hex digits.
    public static func parse(_ text: some StringProtocol) throws(IntegrityError) -> Digest32 {
        guard text.utf8.count == 64 else {
            throw IntegrityError(.malformedIdentifier, "a digest is 64 hex digits, got \(text.utf8.count) characters")
        }
        do {
            return try Digest32(bytes: Hex.decodeLowercase(text))
        } catch {
            throw IntegrityError(.malformedIdentifier, "a digest must be 64 lowercase hex digits")
        }
    }
}
