import Synchronization
import Testing

@testable import AetherTransport

@Suite struct HTTPBodyStreamStateMachineTests {
    /// Counts the wake-ups and resumptions a test expects.
    final class Counter: Sendable {
        let wakes = Atomic<Int>(0)
        let accepted = Atomic<Int>(0)
        let refused = Atomic<Int>(0)
        var wake: @Sendable () -> Void { { self.wakes.add(1, ordering: .relaxed) } }
        var resume: @Sendable (Bool) -> Void {
            { accepted in
                if accepted {
                    self.accepted.add(1, ordering: .relaxed)
                } else {
                    self.refused.add(1, ordering: .relaxed)
                }
            }
        }
    }

    func piece(_ count: Int, _ value: UInt8 = 0) -> HTTPBodyPiece { .bytes([UInt8](repeating: value, count: count)) }

    func bytes(of action: HTTPBodyStreamStateMachine.NextAction) -> [UInt8]? {
        if case .piece(.bytes(let bytes), _) = action { return bytes }
        return nil
    }

    @Test func aWaitingConsumerIsWokenOnceByTheNextWrite() {
        let counter = Counter()
        var machine = HTTPBodyStreamStateMachine(length: nil, capacity: 2)
        machine.attach(wake: counter.wake)
        guard case .waiting = machine.next() else { Issue.record("expected waiting"); return }
        guard case .queued(let wake?) = machine.write(piece(3, 7), resume: counter.resume) else {
            Issue.record("expected a wake-up")
            return
        }
        wake()
        // A second write while nobody waits owes no wake-up.
        guard case .queued(nil) = machine.write(piece(1), resume: counter.resume) else {
            Issue.record("expected no wake-up")
            return
        }
        #expect(counter.wakes.load(ordering: .relaxed) == 1)
        #expect(bytes(of: machine.next()) == [7, 7, 7])
    }

    @Test func aFullQueueParksTheWriterUntilThePieceAheadIsTaken() {
        let counter = Counter()
        var machine = HTTPBodyStreamStateMachine(length: nil, capacity: 1)
        guard case .queued = machine.write(piece(1, 1), resume: counter.resume) else { Issue.record("queued"); return }
        guard case .parked = machine.write(piece(1, 2), resume: counter.resume) else { Issue.record("parked"); return }
        let first = machine.next()
        #expect(bytes(of: first) == [1])
        guard case .piece(_, let resume?) = first else { Issue.record("expected a writer to resume"); return }
        resume(true)
        #expect(counter.accepted.load(ordering: .relaxed) == 1)
        #expect(bytes(of: machine.next()) == [2])
        _ = machine.finish()
        guard case .finished = machine.next() else { Issue.record("expected finished"); return }
    }

    @Test func aDeclaredLengthIsEnforcedBothWays() {
        let counter = Counter()
        var long = HTTPBodyStreamStateMachine(length: 4, capacity: 4)
        guard case .queued = long.write(piece(3), resume: counter.resume) else { Issue.record("queued"); return }
        guard case .refused(let overrun) = long.write(piece(2), resume: counter.resume) else {
            Issue.record("expected the overrun refused")
            return
        }
        #expect(overrun.code == .bodySourceFailed)

        var short = HTTPBodyStreamStateMachine(length: 4, capacity: 4)
        _ = short.write(piece(3), resume: counter.resume)
        _ = short.finish()
        _ = short.next()
        guard case .failed(let error) = short.next() else { Issue.record("expected the short body to fail"); return }
        #expect(error.code == .bodySourceFailed)

        var exact = HTTPBodyStreamStateMachine(length: 4, capacity: 4)
        _ = exact.write(piece(4), resume: counter.resume)
        _ = exact.finish()
        _ = exact.next()
        guard case .finished = exact.next() else { Issue.record("expected finished"); return }
    }

    @Test func abortFailsTheConsumerAndLaterWritesAreRefused() {
        let counter = Counter()
        var machine = HTTPBodyStreamStateMachine(length: nil, capacity: 2)
        _ = machine.abort("gone")
        guard case .failed(let error) = machine.next() else { Issue.record("expected failed"); return }
        #expect(error.code == .bodySourceFailed)
        guard case .refused = machine.write(piece(1), resume: counter.resume) else { Issue.record("refused"); return }
    }

    @Test func closingRefusesParkedAndLaterWriters() {
        let counter = Counter()
        var machine = HTTPBodyStreamStateMachine(length: nil, capacity: 1)
        machine.attach(wake: counter.wake)
        _ = machine.write(piece(1), resume: counter.resume)
        _ = machine.write(piece(1), resume: counter.resume)
        _ = machine.write(piece(1), resume: counter.resume)
        for resume in machine.close() { resume(false) }
        #expect(counter.refused.load(ordering: .relaxed) == 2)
        guard case .refused(let error) = machine.write(piece(1), resume: counter.resume) else {
            Issue.record("expected refused")
            return
        }
        #expect(error.code == .cancelled)
        #expect(machine.finish() == nil)
    }
}
