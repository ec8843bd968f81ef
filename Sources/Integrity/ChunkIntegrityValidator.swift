public import AetherIO
import Synchronization

/// Checks the freshness of chunk messages (fail closed): a per-session counter that must strictly
/// increase, a timestamp within `abs(now - timestamp) <= skew` of an injected clock, and a nonce
/// that was not seen while its timestamp could still be accepted.
///
/// Memory stays bounded under a flood: nonces sit in time buckets that are dropped whole once
/// they age out of the window, and the cache refuses (`.capacityExceeded`) rather than grows past
/// `maximumNonces`. Nonces are stored as their SHA-256, so any nonce length costs 32 bytes.
public final class ChunkIntegrityValidator: Sendable {
    /// Limits of the validator.
    public struct Configuration: Sendable, Hashable {
        /// Largest accepted `abs(now - timestamp)`, in milliseconds.
        public var skewWindowMilliseconds: Int64
        /// Width of one nonce bucket, in milliseconds.
        public var bucketWidthMilliseconds: Int64
        /// Most nonces held at once.
        public var maximumNonces: Int
        /// Most sessions whose counters are tracked at once.
        public var maximumSessions: Int

        /// 30 s skew, 1 s buckets, 65,536 nonces, 4,096 sessions.
        public static let standard = Configuration(
            skewWindowMilliseconds: 30_000, bucketWidthMilliseconds: 1_000, maximumNonces: 65_536,
            maximumSessions: 4_096)

        /// Sets every limit; each must be positive.
        public init(
            skewWindowMilliseconds: Int64, bucketWidthMilliseconds: Int64, maximumNonces: Int, maximumSessions: Int
        ) {
            self.skewWindowMilliseconds = skewWindowMilliseconds
            self.bucketWidthMilliseconds = bucketWidthMilliseconds
            self.maximumNonces = maximumNonces
            self.maximumSessions = maximumSessions
        }
    }

    private let clock: any AetherClock
    private let state: Mutex<ChunkIntegrityValidatorStateMachine>

    /// A validator reading time from the wall reading of `clock` (compared in Unix milliseconds).
    public init(configuration: Configuration = .standard, clock: any AetherClock = SystemClock())
        throws(IntegrityError)
    {
        guard configuration.skewWindowMilliseconds > 0, configuration.bucketWidthMilliseconds > 0,
            configuration.maximumNonces > 0, configuration.maximumSessions > 0
        else { throw IntegrityError(.invalidArgument, "validator limits must be positive") }
        self.clock = clock
        state = Mutex(ChunkIntegrityValidatorStateMachine(configuration: configuration))
    }

    /// Accepts a message or throws `.timestampOutOfWindow`, `.replayDetected` (counter or nonce)
    /// or `.capacityExceeded`. Nothing is recorded unless every check passes.
    public func validate(
        sessionID: String, counter: UInt64, timestampMilliseconds: Int64, nonce: some Collection<UInt8>
    ) throws(IntegrityError) {
        guard (8...64).contains(nonce.count) else {
            throw IntegrityError(.invalidArgument, "a nonce is 8 to 64 bytes, got \(nonce.count)")
        }
        let key = SHA256.hash(nonce)
        let now = clock.wallMilliseconds()
        try state.withLock { (machine) throws(IntegrityError) in
            try machine.validate(
                sessionID: sessionID, counter: counter, timestampMilliseconds: timestampMilliseconds, nonce: key,
                now: now)
        }
    }

    /// Forgets a finished session's counter.
    public func endSession(_ sessionID: String) {
        state.withLock { $0.endSession(sessionID) }
    }

    /// Nonces held right now (after dropping expired buckets).
    public var storedNonceCount: Int {
        let now = clock.wallMilliseconds()
        return state.withLock { machine in
            machine.evict(now: now)
            return machine.nonceCount
        }
    }
}
