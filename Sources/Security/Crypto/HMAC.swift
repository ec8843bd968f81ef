public import AetherIO

/// HMAC-SHA-256 under a `SymmetricKey` (AetherIO's `HMACSHA256` over OpenSSL). Verification compares in
/// constant time.
public enum HMAC {
    /// The HMAC-SHA-256 of `message` under `key`.
    public static func authenticationCode(
        for message: some Sequence<UInt8>, using key: SymmetricKey
    ) throws(SecurityError) -> Digest32 {
        do {
            return try HMACSHA256.authenticate(message, key: key.secret)
        } catch {
            throw SecurityError(.systemCall, "HMAC-SHA-256 failed: \(error.message)")
        }
    }

    /// True when `code` is the HMAC-SHA-256 of `message` under `key` (constant-time comparison).
    public static func isValidAuthenticationCode(
        _ code: Digest32, authenticating message: some Sequence<UInt8>, using key: SymmetricKey
    ) throws(SecurityError) -> Bool {
        try authenticationCode(for: message, using: key) == code
    }
}
