import Synchronization

@testable import AetherTransport

/// A session clock that moves only when the test says so.
final class ManualSessionClock: SessionClock {
    private let time: Mutex<SessionTime>

    init(_ start: SessionTime = SessionTime(monotonic: 1_000, wall: 1_750_000_000_000)) { time = Mutex(start) }

    func now() -> SessionTime { time.withLock { $0 } }

    func advance(_ milliseconds: UInt64) { time.withLock { $0 = $0.advanced(by: milliseconds) } }
}
