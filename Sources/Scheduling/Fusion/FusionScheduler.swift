import Synchronization

/// The fusion scheduler behind a lock: record measurements, ask for decisions, react to path changes.
public final class FusionScheduler: PathChangeResponder {
    private let state: Mutex<FusionSchedulerStateMachine>

    /// Creates a scheduler.
    public init(configuration: FusionSchedulerStateMachine.Configuration = .init()) {
        state = Mutex(FusionSchedulerStateMachine(configuration: configuration))
    }

    /// Folds in one measurement (one finished chunk).
    public func record(_ measurement: BandwidthMeasurement) { state.withLock { $0.record(measurement) } }

    /// The chunk size and parallelism for the next chunk.
    public func decide(_ context: SchedulingContext) -> SchedulingDecision { state.withLock { $0.decide(context) } }

    /// Whether anti-fighting mode is active.
    public var transportStable: Bool { state.withLock { $0.transportStable } }

    /// Raises the Kalman process noise after a path change.
    public func pathDidChange() { state.withLock { $0.notePathChange() } }
}
