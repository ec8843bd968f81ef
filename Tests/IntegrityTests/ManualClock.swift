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
