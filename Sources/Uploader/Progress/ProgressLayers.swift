public import AetherIO
import Synchronization

/// The progress of one upload in four layers (upload-engine v2.2, ProgressLayers): bytes handed to
/// the transport (wire), acknowledged by the server, Merkle-verified (the receipt's proof checked against the
/// local tree) and reconstructed by the server (rebuilt from parity). The displayed fraction is the
/// acknowledged share smoothed by a Savitzky-Golay filter (window 7, order 2, read at the newest sample),
/// never above the acknowledged share, slowed down in the last 5% and never going backwards; it reaches 1
/// only when every byte is acknowledged and verified. Rate and time remaining come from the acknowledged
/// bytes over the filter's window.
///
/// Two safety valves report events: wire-ack divergence above 8% of the total, and any acknowledged byte
/// that is not Merkle-verified. Updates are synchronous and thread-safe (a `Mutex` around a
/// `ProgressStateMachine`); the caller samples the display at its own pace (`sample()`, e.g. 10 times a second).
public final class ProgressLayers: Sendable {
    /// The wire-ack divergence above which the valve opens: 8% of the total.
    public static let wireAckDivergenceLimit = 0.08

    /// A safety valve opening or closing.
    public enum Event: Sendable, Equatable {
        /// More than 8% of the total is on the wire without an acknowledgement (`share` of the total).
        case wireAckDivergence(share: Double)
        /// The wire-ack gap is back at or under 8%.
        case wireAckConverged
        /// Acknowledged bytes are not Merkle-verified.
        case ackMerkleDivergence(unverifiedBytes: UInt64)
        /// Every acknowledged byte is verified again.
        case ackMerkleConverged
    }

    /// The state at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// The upload's length.
        public var totalBytes: UInt64
        /// Bytes handed to the transport (less those that failed and will be sent again).
        public var wire: UInt64
        /// Bytes the server acknowledged.
        public var acknowledged: UInt64
        /// Acknowledged bytes whose receipts verified against the Merkle tree.
        public var merkleVerified: UInt64
        /// Bytes the server rebuilt from parity.
        public var serverReconstructed: UInt64
        /// What to show, 0...1: smoothed, monotonic, decelerated in the last 5%.
        public var displayedFraction: Double
        /// Acknowledged bytes per second over the filter's window; nil before two samples.
        public var bytesPerSecond: Double?
        /// Seconds until every byte is acknowledged at that rate; nil when the rate is unknown or zero.
        public var secondsRemaining: Double?
        /// The wire-ack valve is open.
        public var wireAckDivergent: Bool
        /// The ack-Merkle valve is open.
        public var ackMerkleDivergent: Bool
    }

    private let clock: any AetherClock
    private let state: Mutex<ProgressStateMachine>

    /// A tracker for an upload of `totalBytes`, reading time from `clock` (monotonic).
    public init(totalBytes: UInt64, clock: any AetherClock) {
        self.clock = clock
        state = Mutex(ProgressStateMachine(totalBytes: totalBytes))
    }

    /// `bytes` were handed to the transport.
    @discardableResult
    public func wireSent(_ bytes: UInt64) -> [Event] { state.withLock { $0.wireSent(bytes) } }

    /// `bytes` handed to the transport failed and will be sent again.
    @discardableResult
    public func wireFailed(_ bytes: UInt64) -> [Event] { state.withLock { $0.wireFailed(bytes) } }

    /// The server acknowledged `bytes`; `merkleVerified` when their receipt's proof verified in the same step
    /// (one call, so no sample sees the acknowledgement without its verification).
    @discardableResult
    public func acknowledged(_ bytes: UInt64, merkleVerified: Bool) -> [Event] {
        state.withLock { $0.acknowledged(bytes, merkleVerified: merkleVerified) }
    }

    /// `bytes` acknowledged earlier were verified later.
    @discardableResult
    public func merkleVerified(_ bytes: UInt64) -> [Event] { state.withLock { $0.merkleVerified(bytes) } }

    /// The server rebuilt `bytes` from parity.
    @discardableResult
    public func serverReconstructed(_ bytes: UInt64) -> [Event] { state.withLock { $0.serverReconstructed(bytes) } }

    /// A growing source's length grew to `totalBytes` (a total never shrinks; the display never goes back).
    @discardableResult
    public func setTotalBytes(_ totalBytes: UInt64) -> [Event] { state.withLock { $0.setTotalBytes(totalBytes) } }

    /// Takes a display sample now and returns the state.
    public func sample() -> Snapshot {
        let now = clock.monotonicNanoseconds()
        return state.withLock { $0.sample(at: now) }
    }

    /// The state as of the last sample (layers and valves are current).
    public var snapshot: Snapshot { state.withLock { $0.snapshot } }
}
