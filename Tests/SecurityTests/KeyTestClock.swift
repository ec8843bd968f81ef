import AetherSecurity
import Synchronization

/// A wall clock that moves only when a test says so.
final class ManualKeyClock: KeyClock {
    private let milliseconds: Mutex<UInt64>

    init(start: UInt64 = 1_700_000_000_000) { milliseconds = Mutex(start) }

    func now() -> KeyTimestamp { KeyTimestamp(millisecondsSinceEpoch: milliseconds.withLock { $0 }) }

    func advance(milliseconds delta: UInt64) { milliseconds.withLock { $0 += delta } }
}
