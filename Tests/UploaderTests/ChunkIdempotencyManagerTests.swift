import AetherIO
import AetherTestSupport
import Dispatch
import Synchronization
import Testing

@testable import AetherUploader

/// A journal in memory that counts its writes and can be told to fail.
final class MemoryJournal: IdempotencyJournal {
    private struct State {
        var bytes: [UInt8]?
        var saves = 0
        var failing = false
    }
    private let state = Mutex(State())

    var bytes: [UInt8]? { state.withLock { $0.bytes } }
    var saves: Int { state.withLock { $0.saves } }
    func setFailing(_ failing: Bool) { state.withLock { $0.failing = failing } }
    func setBytes(_ bytes: [UInt8]) { state.withLock { $0.bytes = bytes } }

    func load() throws(UploaderError) -> [UInt8]? { state.withLock { $0.bytes } }

    func save(_ bytes: [UInt8]) throws(UploaderError) {
        let failing = state.withLock { $0.failing }
        if failing { throw UploaderError(.systemCall, "the test journal refuses writes") }
        state.withLock {
            $0.bytes = bytes
            $0.saves += 1
        }
    }
}

@Suite struct ChunkIdempotencyManagerTests {
    /// SHA-256("abc") (FIPS 180-2 example).
    static func hash() throws -> Digest32 {
        try Digest32(hex: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func theKeyIsSHA256OfSessionIndexHashAndAttempt() throws {
        let hash = try Self.hash()
        #expect(
            IdempotencyKey.preimage(session: "upload-7", index: 3, chunkHash: hash, attempt: 0)
                == "upload-7:3:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad:0")
        // Expected values from Python: hashlib.sha256(b"upload-7:3:<hash>:0").hexdigest().
        #expect(
            IdempotencyKey(session: "upload-7", index: 3, chunkHash: hash, attempt: 0).hex
                == "f23dd424fab8c0386b8fd712e6b5789edf0b72c4498cad14aad1c888ec4a1712")
        #expect(
            IdempotencyKey(session: "a:b:c", index: 12, chunkHash: hash, attempt: 5).hex
                == "c603a3e3b6a2edad8bb3a6cbf8919005cd7d61d7c37f9b0dedc5a794ebe32d43")
        #expect(IdempotencyKey.headerName == "Idempotency-Key")
    }

    @Test func twoConcurrentReservationsOfOneKeyHaveOneWinner() throws {
        let hash = try Self.hash()
        for round in 0..<50 {
            let manager = try ChunkIdempotencyManager(session: "s\(round)", clock: ManualClock(), journal: nil)
            let outcomes = Mutex<[ChunkIdempotencyManager.Reservation]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let outcome = (try? manager.reserve(index: 4, chunkHash: hash, attempt: 0)) ?? .earlierRun
                outcomes.withLock { $0.append(outcome) }
            }
            let all = outcomes.withLock { $0 }
            let winners = all.filter { if case .reserved = $0 { true } else { false } }
            #expect(winners.count == 1)
            #expect(all.filter { $0 == .inFlight }.count == 7)
        }
    }

    @Test func releaseFreesAKeyAndCompletionRetiresIt() throws {
        let hash = try Self.hash()
        let manager = try ChunkIdempotencyManager(session: "s", clock: ManualClock(), journal: nil)
        guard case .reserved(let key) = try manager.reserve(index: 0, chunkHash: hash, attempt: 0) else {
            Issue.record("the first reservation failed")
            return
        }
        #expect(manager.state(of: key) == .inFlight)
        #expect(try manager.reserve(index: 0, chunkHash: hash, attempt: 0) == .inFlight)
        #expect(manager.release(key))
        #expect(manager.state(of: key) == .released)
        #expect(!manager.release(key))
        #expect(try manager.reserve(index: 0, chunkHash: hash, attempt: 0) == .reserved(key))
        #expect(manager.complete(key))
        #expect(try manager.reserve(index: 0, chunkHash: hash, attempt: 0) == .completed)
        #expect(!manager.release(key))
        #expect(manager.state(of: key) == .completed)
        #expect(throws: UploaderError.self) { try manager.reserve(index: -1, chunkHash: hash, attempt: 0) }
    }

    @Test func aKeyIsForgottenExactlyFortyEightHoursAfterItsReservation() throws {
        let hash = try Self.hash()
        let clock = ManualClock()
        let manager = try ChunkIdempotencyManager(session: "s", clock: clock, journal: nil)
        guard case .reserved(let key) = try manager.reserve(index: 2, chunkHash: hash, attempt: 0) else {
            Issue.record("the reservation failed")
            return
        }
        manager.complete(key)
        clock.advance(by: .seconds(48 * 3600) - .milliseconds(1))
        #expect(manager.state(of: key) == .completed)
        #expect(try manager.reserve(index: 2, chunkHash: hash, attempt: 0) == .completed)
        clock.advance(by: .milliseconds(1))
        #expect(manager.state(of: key) == nil)
        #expect(try manager.reserve(index: 2, chunkHash: hash, attempt: 0) == .reserved(key))
        // Attempt numbering does not go back after a key expired.
        #expect(try manager.reserveNextAttempt(index: 2, chunkHash: hash).attempt == 1)
    }

    @Test func nextAttemptsAreFreshPerChunk() throws {
        let hash = try Self.hash()
        let manager = try ChunkIdempotencyManager(session: "s", clock: ManualClock(), journal: nil)
        var keys = Set<IdempotencyKey>()
        for expected in 0..<3 {
            let next = try manager.reserveNextAttempt(index: 0, chunkHash: hash)
            #expect(next.attempt == expected)
            keys.insert(next.key)
        }
        let other = try manager.reserveNextAttempt(index: 1, chunkHash: hash)
        #expect(other.attempt == 0)
        keys.insert(other.key)
        #expect(keys.count == 4)
    }

    @Test func aResumedRunNeverSendsAKeyOfAnEarlierRun() throws {
        let hash = try Self.hash()
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        var earlier = Set<IdempotencyKey>()
        do {
            let first = try ChunkIdempotencyManager(
                session: "up-1", clock: ManualClock(), journal: VaultIdempotencyJournal(vault: vault, session: "up-1"))
            #expect(first.attemptBase == 0)
            for index in 0..<3 { earlier.insert(try first.reserveNextAttempt(index: index, chunkHash: hash).key) }
            let retry = try first.reserveNextAttempt(index: 1, chunkHash: hash)
            #expect(retry.attempt == 1)
            earlier.insert(retry.key)
            // The process dies here with every key in flight.
        }
        let reopened = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        let second = try ChunkIdempotencyManager(
            session: "up-1", clock: ManualClock(), journal: VaultIdempotencyJournal(vault: reopened, session: "up-1"))
        #expect(second.attemptBase == 2)
        for index in 0..<3 {
            let next = try second.reserveNextAttempt(index: index, chunkHash: hash)
            #expect(next.attempt == 2)
            #expect(!earlier.contains(next.key))
        }
        #expect(try second.reserve(index: 0, chunkHash: hash, attempt: 0) == .earlierRun)
        #expect(try second.reserve(index: 0, chunkHash: hash, attempt: 1) == .earlierRun)
        // Another session's journal is separate.
        let other = try ChunkIdempotencyManager(
            session: "up-2", clock: ManualClock(), journal: VaultIdempotencyJournal(vault: reopened, session: "up-2"))
        #expect(other.attemptBase == 0)
    }

    @Test func theJournalIsWrittenOnlyWhenTheWatermarkRises() throws {
        let hash = try Self.hash()
        let journal = MemoryJournal()
        let manager = try ChunkIdempotencyManager(session: "s", clock: ManualClock(), journal: journal)
        for index in 0..<20 { _ = try manager.reserveNextAttempt(index: index, chunkHash: hash) }
        #expect(journal.saves == 1)
        #expect(journal.bytes == Array(#"{"attemptWatermark":0,"session":"s","version":1}"#.utf8))
        _ = try manager.reserveNextAttempt(index: 3, chunkHash: hash)
        #expect(journal.saves == 2)
        _ = try manager.reserveNextAttempt(index: 4, chunkHash: hash)
        #expect(journal.saves == 2)
    }

    @Test func aFailedJournalWriteUndoesTheReservation() throws {
        let hash = try Self.hash()
        let journal = MemoryJournal()
        journal.setFailing(true)
        let manager = try ChunkIdempotencyManager(session: "s", clock: ManualClock(), journal: journal)
        let error = #expect(throws: UploaderError.self) { try manager.reserveNextAttempt(index: 0, chunkHash: hash) }
        #expect(error?.code == .systemCall)
        let key = IdempotencyKey(session: "s", index: 0, chunkHash: hash, attempt: 0)
        #expect(manager.state(of: key) == nil)
        journal.setFailing(false)
        #expect(try manager.reserveNextAttempt(index: 0, chunkHash: hash) == (key, 0))
        #expect(journal.saves == 1)
    }

    @Test(arguments: [
        #"{"attemptWatermark":3,"session":"other","version":1}"#, #"{"attemptWatermark":3,"session":"s","version":2}"#,
        #"{"attemptWatermark":-1,"session":"s","version":1}"#, "not json", "",
    ])
    func aDamagedJournalIsATypedError(_ text: String) {
        let journal = MemoryJournal()
        journal.setBytes(Array(text.utf8))
        let error = #expect(throws: UploaderError.self) {
            try ChunkIdempotencyManager(session: "s", clock: ManualClock(), journal: journal)
        }
        #expect(error?.code == .snapshotDamaged)
    }

    @Test func aDamagedVaultJournalNamesItsFile() throws {
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        let journal = VaultIdempotencyJournal(vault: vault, session: "s")
        try journal.save([1])
        try scratch.overwrite(vault.path(for: journal.key), with: [0])
        let error = #expect(throws: UploaderError.self) {
            try ChunkIdempotencyManager(session: "s", clock: ManualClock(), journal: journal)
        }
        #expect(error?.code == .snapshotDamaged)
        #expect(error?.message.contains(vault.path(for: journal.key)) == true)
    }
}
