import AetherIO

/// Suites whose test content is the same on every run: `Self.bytes(count, seed:)`.
protocol SeededContent {}

extension SeededContent {
    /// `count` bytes from SplitMix64 seeded with `seed`, all eight bytes of each output, low byte first.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        var out = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = generator.next()
            for _ in 0..<8 where index < count {
                out[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return out
    }
}
