import AetherIO

/// Fresh non-zero attempt ids: SplitMix64 from a seed (random by default; tests pass one).
struct AttemptIDGenerator: Sendable {
    private var state: UInt64

    init(seed: UInt64?) {
        if let seed {
            state = seed
        } else {
            var generator = SecureRandom()
            state = generator.next()
        }
    }

    mutating func next() -> AttemptID {
        while true {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            if let id = AttemptID(rawValue: z ^ (z >> 31)) { return id }
        }
    }
}
