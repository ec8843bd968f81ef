/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny seeded generator whose sequence is the same on
/// every platform, for reproducible tests, statistics and simulations. Never for secrets or sampling
/// that an adversary may predict: use `SecureRandom` there.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The internal state; the next output is derived from `state + 0x9E3779B97F4A7C15`.
    public private(set) var state: UInt64

    /// A generator whose first step starts from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 bits of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
