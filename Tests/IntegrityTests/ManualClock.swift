import AetherIntegrity
import Synchronization

/// A clock the test moves by hand.
final class ManualClock: IntegrityClock {
    private let milliseconds: Mutex<Int64>

    init(_ start: Int64 = 0) { milliseconds = Mutex(start) }

    func nowMilliseconds() -> Int64 { milliseconds.withLock { $0 } }

    func set(_ value: Int64) { milliseconds.withLock { $0 = value } }

    func advance(by delta: Int64) { milliseconds.withLock { $0 += delta } }
}

/// SplitMix64: a seeded generator for statistics that must be reproducible (never for production).
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
