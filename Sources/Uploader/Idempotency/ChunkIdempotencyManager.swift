public import AetherIO
import Foundation
import Synchronization

/// Idempotency keys for chunk sends (upload-engine v2.2, ChunkIdempotencyManager; v2.1 RACE-3): one manager per
/// upload session hands out the `Idempotency-Key` of every attempt to send a chunk, with an atomic
/// check-and-reserve (two concurrent reservations of one key: exactly one wins), a 48-hour lifetime measured on
/// the wall clock of an injected `AetherClock`, release after a failed send and completion after an
/// acknowledgement.
///
/// What survives a crash (the decision, docs/UPLOADER.md): a server may have stored the outcome of any key an
/// earlier run sent, and a key that led to an acknowledgement would make the server replay "stored" for bytes it
/// may since have lost. So a resumed run must never send a key of an earlier run. The manager persists one
/// number per session, the attempt watermark (the highest attempt number used), in an `IdempotencyJournal` (the
/// vault, encrypted), and writes it before a reservation that raises it returns. A resumed manager numbers every
/// chunk's attempts from watermark + 1, so each key it hands out differs from every earlier one (the key hashes
/// the attempt). The journal costs one write when a run starts sending and one per retry that raises the
/// watermark, not one per chunk; the per-key table (reserved, released, completed) lives in memory for the run.
public final class ChunkIdempotencyManager: Sendable {
    /// How long a key is remembered: 48 hours, the longest an upload session lives.
    public static let timeToLive: Duration = .seconds(48 * 3600)

    /// What a reservation found.
    public enum Reservation: Sendable, Equatable {
        /// The key is now held by the caller: send with it, then `complete` or `release` it.
        case reserved(IdempotencyKey)
        /// Another sender holds this key.
        case inFlight
        /// The chunk was acknowledged under this key (within its lifetime); do not send it again with it.
        case completed
        /// The attempt number belongs to an earlier run of this session and is never used again.
        case earlierRun
    }

    /// Where a key stands.
    public enum KeyState: Sendable, Equatable {
        /// Held by a sender; a second reservation of it is refused.
        case inFlight
        /// The send failed and let the key go; it may be reserved again.
        case released
        /// The server acknowledged the chunk under this key; it is not reserved again within its lifetime.
        case completed
    }

    /// The session the keys belong to.
    public let session: String
    private let clock: any AetherClock
    private let journal: (any IdempotencyJournal)?
    private let state: Mutex<IdempotencyStateMachine>

    /// A manager for `session`, restoring the attempt watermark from `journal` when it holds one (nil: keys are
    /// remembered for this run only). A damaged journal throws `.snapshotDamaged` naming it; the caller decides
    /// (removing it and continuing is safe only when the server's idempotency records for this session expired).
    public init(session: String, clock: any AetherClock, journal: (any IdempotencyJournal)?) throws(UploaderError) {
        guard !session.isEmpty else { throw UploaderError(.invalidArgument, "an upload session id is not empty") }
        self.session = session
        self.clock = clock
        self.journal = journal
        var base = 0
        if let journal, let bytes = try journal.load() {
            base = try Self.decodeWatermark(bytes, session: session) + 1
        }
        let ttl = AetherTime.nanoseconds(Self.timeToLive) / 1_000_000
        state = Mutex(IdempotencyStateMachine(timeToLive: ttl, attemptBase: base))
    }

    /// The first attempt number this run may use (0, or the restored watermark + 1).
    public var attemptBase: Int { state.withLock { $0.attemptBase } }

    /// Reserves the key of attempt `attempt` for chunk `index`: check and reserve in one step under the lock.
    /// A reservation that raises the attempt watermark is written to the journal before this returns; when that
    /// write fails the reservation is undone and the error thrown.
    public func reserve(index: Int, chunkHash: Digest32, attempt: Int) throws(UploaderError) -> Reservation {
        guard index >= 0, attempt >= 0 else {
            throw UploaderError(.invalidArgument, "a chunk index and an attempt number are not negative")
        }
        let key = IdempotencyKey(session: session, index: index, chunkHash: chunkHash, attempt: attempt)
        return try state.withLock { (machine) throws(UploaderError) -> Reservation in
            try Self.reserve(
                &machine, key: key, index: index, attempt: attempt, now: clock.wallMilliseconds(),
                journal: journal, session: session)
        }
    }

    /// Reserves a fresh key for the next attempt at chunk `index` (one above any attempt this run used for it,
    /// and above every attempt of earlier runs), in one step.
    public func reserveNextAttempt(index: Int, chunkHash: Digest32) throws(UploaderError) -> (
        key: IdempotencyKey, attempt: Int
    ) {
        guard index >= 0 else { throw UploaderError(.invalidArgument, "a chunk index is not negative") }
        return try state.withLock { (machine) throws(UploaderError) -> (key: IdempotencyKey, attempt: Int) in
            let attempt = machine.nextAttempt(index: index)
            let key = IdempotencyKey(session: session, index: index, chunkHash: chunkHash, attempt: attempt)
            let outcome = try Self.reserve(
                &machine, key: key, index: index, attempt: attempt, now: clock.wallMilliseconds(), journal: journal,
                session: session)
            // A fresh attempt number is never held or completed in this run.
            guard case .reserved = outcome else {
                throw UploaderError(.invalidArgument, "attempt \(attempt) of chunk \(index) is already taken")
            }
            return (key, attempt)
        }
    }

    /// Marks `key` acknowledged: it is never reserved again within its lifetime. False when it was not in flight.
    @discardableResult
    public func complete(_ key: IdempotencyKey) -> Bool { state.withLock { $0.complete(key: key.hex) } }

    /// Lets `key` go after a failed send (it may be reserved again). False when it was not in flight.
    @discardableResult
    public func release(_ key: IdempotencyKey) -> Bool { state.withLock { $0.release(key: key.hex) } }

    /// Where `key` stands; nil when unknown or past its lifetime.
    public func state(of key: IdempotencyKey) -> KeyState? {
        let now = clock.wallMilliseconds()
        return state.withLock { $0.state(of: key.hex, now: now) }
    }

    // MARK: Internal

    private static func reserve(
        _ machine: inout IdempotencyStateMachine, key: IdempotencyKey, index: Int, attempt: Int, now: Int64,
        journal: (any IdempotencyJournal)?, session: String
    ) throws(UploaderError) -> Reservation {
        let highest = machine.highestAttempt
        let indexHighest = machine.highestAttempt(index: index)
        switch machine.reserve(key: key.hex, index: index, attempt: attempt, now: now) {
        case .inFlight: return .inFlight
        case .completed: return .completed
        case .earlierRun: return .earlierRun
        case .reserved:
            if machine.highestAttempt > highest, let journal {
                do {
                    try journal.save(encodeWatermark(machine.highestAttempt, session: session))
                } catch {
                    machine.forget(key: key.hex, restoringHighest: highest, byIndex: indexHighest, index: index)
                    throw error
                }
            }
            return .reserved(key)
        }
    }

    /// The journal record: `{"attemptWatermark":N,"session":"...","version":1}` (canonical JSON).
    private struct Record: Codable {
        var version: Int
        var session: String
        var attemptWatermark: Int
    }

    static func encodeWatermark(_ watermark: Int, session: String) throws(UploaderError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(Record(version: 1, session: session, attemptWatermark: watermark)))
        } catch {
            throw UploaderError(.invalidArgument, "cannot encode the idempotency journal")
        }
    }

    static func decodeWatermark(_ bytes: [UInt8], session: String) throws(UploaderError) -> Int {
        let record: Record
        do {
            record = try JSONDecoder().decode(Record.self, from: Data(bytes))
        } catch {
            throw UploaderError(.snapshotDamaged, "the idempotency journal of this session does not parse")
        }
        guard record.version == 1, record.session == session, record.attemptWatermark >= 0,
            record.attemptWatermark < Int.max / 2
        else {
            throw UploaderError(.snapshotDamaged, "the idempotency journal belongs to another session or version")
        }
        return record.attemptWatermark
    }
}
