public import AetherIO

/// A symmetric key in the shape of CryptoKit's: opaque, one wiped allocation, constant-time `==`,
/// printed as `<redacted>`. Key material never appears as `String`, `[UInt8]` or `Data` in an API (BUG-17).
public struct SymmetricKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The sizes Aether uses.
    public enum Size: Int, Sendable {
        /// 128-bit key (16 bytes).
        case bits128 = 128
        /// 256-bit key (32 bytes).
        case bits256 = 256

        var byteCount: Int { rawValue / 8 }
    }

    let secret: SecureBytes

    /// A fresh random key from the system CSPRNG.
    public init(size: Size) {
        secret = SecureBytes(randomCount: size.byteCount)
    }

    /// Wraps secret bytes that are already in protected storage (a key store, a KDF).
    /// Throws `.invalidKey` unless they are 16 or 32 bytes.
    public init(secureBytes: SecureBytes) throws(SecurityError) {
        guard secureBytes.count == 16 || secureBytes.count == 32 else {
            throw SecurityError(.invalidKey, "a symmetric key is 128 or 256 bits, got \(secureBytes.count * 8)")
        }
        secret = secureBytes
    }

    /// The key's size in bits.
    public var bitCount: Int { secret.count * 8 }

    /// Calls `body` with the key bytes, for primitives inside this package. Do not let them escape.
    package func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try unsafe secret.withUnsafeBytes(body)
    }

    /// Constant-time equality.
    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
        lhs.secret.constantTimeEquals(rhs.secret)
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}
