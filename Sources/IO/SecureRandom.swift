/// The system CSPRNG (libsodium `randombytes`, backed by getrandom(2)).
///
/// Fails closed: when the CSPRNG is unavailable (libsodium did not initialise, or getrandom(2) and
/// /dev/urandom both fail) the process stops with a message; weak or zero bytes are never returned.
///
/// Conforms to `RandomNumberGenerator`, so `shuffle(using:)` and `Int.random(in:using:)` run on it.
public struct SecureRandom: RandomNumberGenerator, Sendable {
    /// A handle on the system CSPRNG; it holds no state.
    public init() {}

    /// 64 random bits.
    public mutating func next() -> UInt64 {
        var value: UInt64 = 0
        unsafe withUnsafeMutableBytes(of: &value) { unsafe Sodium.randomBytes($0) }
        return value
    }

    /// `count` random bytes (not secret; use `SecureBytes(randomCount:)` for secrets).
    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        unsafe out.withUnsafeMutableBytes { unsafe Sodium.randomBytes($0) }
        return out
    }

    /// A uniform value in `0..<upperBound` without modulo bias.
    public static func uniform(_ upperBound: UInt32) -> UInt32 { Sodium.randomUniform(upperBound) }
}

/// Constant-time comparison of byte sequences.
public enum ConstantTime {
    /// True when both have the same length and bytes; the time taken depends only on the length.
    public static func equals(_ a: some Sequence<UInt8>, _ b: some Sequence<UInt8>) -> Bool {
        let x = Array(a)
        let y = Array(b)
        return unsafe x.withUnsafeBytes { ra in
            unsafe y.withUnsafeBytes { rb in unsafe Sodium.constantTimeEqual(ra, rb) }
        }
    }
}
