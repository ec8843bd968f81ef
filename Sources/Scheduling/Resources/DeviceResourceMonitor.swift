public import AetherIO
import Synchronization

/// Reads the device's thermal, battery and memory state and turns it into a degradation level.
public final class DeviceResourceMonitor: Sendable {
    private let reader: DeviceResourceReader
    private let clock: any AetherClock
    private let machine: Mutex<(ResourceStateMachine, ResourceSnapshot)>
    private let lastRead = Mutex<Double?>(nil)

    /// Creates a manager reading under `root` (`""` = the real system).
    public init(
        reader: DeviceResourceReader = DeviceResourceReader(),
        configuration: ResourceStateMachine.Configuration = .init(),
        clock: any AetherClock = SystemClock()
    ) {
        self.reader = reader
        self.clock = clock
        machine = Mutex((ResourceStateMachine(configuration: configuration), ResourceSnapshot()))
    }

    /// Reads the device now and returns the applied level.
    @discardableResult
    public func refresh() -> DegradationLevel {
        let snapshot = reader.read()
        let now = clock.monotonicSeconds()
        return machine.withLock { state in
            state.1 = snapshot
            return state.0.update(snapshot, at: now)
        }
    }

    /// Reads the device again when the last reading is older than `interval` seconds (an upload asks at every
    /// decision; sysfs is read at most that often), and returns the applied level.
    @discardableResult
    public func refresh(notWithin interval: Double) -> DegradationLevel {
        let now = clock.monotonicSeconds()
        let due = lastRead.withLock { last in
            guard last.map({ now - $0 >= interval }) ?? true else { return false }
            last = now
            return true
        }
        return due ? refresh() : level
    }

    /// The applied level.
    public var level: DegradationLevel { machine.withLock { $0.0.level } }

    /// The last reading.
    public var lastSnapshot: ResourceSnapshot { machine.withLock { $0.1 } }
}
