import AetherIO

/// Fresh non-zero ids that go on the wire (client attempt ids, host session ids).
///
/// By default every id comes from the CSPRNG (`SecureRandom`): an observer who sees any number of ids
/// learns nothing about the next one. A seed switches to SplitMix64, whose whole sequence follows from one
/// output; that is only for tests, which need reproducible ids and where predictability does not matter.
struct AttemptIDGenerator: Sendable {
    private enum Source: Sendable {
        case secure
        case seeded(SplitMix64)
    }

    private var source: Source

    /// The CSPRNG when `seed` is nil (every production caller); a reproducible sequence for tests otherwise.
    init(seed: UInt64?) {
        source = seed.map { .seeded(SplitMix64(seed: $0)) } ?? .secure
    }

    mutating func next() -> AttemptID {
        while true {
            let value: UInt64
            switch source {
            case .secure:
                var random = SecureRandom()
                value = random.next()
            case .seeded(var generator):
                value = generator.next()
                source = .seeded(generator)
            }
            if let id = AttemptID(rawValue: value) { return id }
        }
    }
}
