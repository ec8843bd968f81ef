import AetherCoding
import Synchronization
import Testing

@testable import AetherUploader

/// A gate a job waits at until the test opens it.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Names in the order jobs ran.
final class Recorder: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ name: String) { storage.withLock { $0.append(name) } }
    var names: [String] { storage.withLock { $0 } }
}

@Suite struct UploadQueueTests {
    @Test func theStateMachineWakesTheHighestPriorityFirstThenFirstCome() {
        var machine = UploadQueueStateMachine<String>(maximumRunning: 1, maximumWaiting: 10)
        #expect(machine.enqueue(id: 1, priority: .normal, waiter: "first") == .run)
        #expect(machine.enqueue(id: 2, priority: .background, waiter: "background") == .wait)
        #expect(machine.enqueue(id: 3, priority: .low, waiter: "low") == .wait)
        #expect(machine.enqueue(id: 4, priority: .critical, waiter: "critical") == .wait)
        #expect(machine.enqueue(id: 5, priority: .low, waiter: "low2") == .wait)
        #expect(machine.finish() == "critical")
        #expect(machine.finish() == "low")
        #expect(machine.finish() == "low2")
        #expect(machine.finish() == "background")
        #expect(machine.running == 1)
        #expect(machine.finish() == nil)
        #expect(machine.running == 0)
    }

    @Test func theStateMachineRefusesBeyondItsWaitingCapacity() {
        var machine = UploadQueueStateMachine<Int>(maximumRunning: 2, maximumWaiting: 1)
        #expect(machine.enqueue(id: 1, priority: .normal, waiter: 1) == .run)
        #expect(machine.enqueue(id: 2, priority: .normal, waiter: 2) == .run)
        #expect(machine.enqueue(id: 3, priority: .normal, waiter: 3) == .wait)
        #expect(machine.enqueue(id: 4, priority: .critical, waiter: 4) == .refuse)
        #expect(machine.cancel(id: 3) == 3)
        #expect(machine.cancel(id: 3) == nil)
        #expect(machine.enqueue(id: 5, priority: .normal, waiter: 5) == .wait)
    }

    @Test func queuedUploadsRunByPriorityAndAFullQueueRefuses() async throws {
        let queue = UploadQueue(maximumRunning: 1, maximumWaiting: 3)
        let gate = Gate()
        let order = Recorder()
        let blocker = Task { try await queue.run(priority: .normal) { await gate.wait() } }
        try await waitUntil { queue.counts.running == 1 }
        var tasks: [Task<Void, any Error>] = []
        for (name, priority) in [("low", DataPriority.low), ("critical", .critical), ("normal", .normal)] {
            let expected = tasks.count + 1
            tasks.append(Task { try await queue.run(priority: priority) { order.append(name) } })
            try await waitUntil { queue.counts.waiting == expected }
        }
        await #expect {
            try await queue.run(priority: .critical) {}
        } throws: { ($0 as? UploaderError)?.code == .queueFull }
        gate.open()
        try await blocker.value
        for task in tasks { try await task.value }
        #expect(order.names == ["critical", "normal", "low"])
        #expect(queue.counts.running == 0 && queue.counts.waiting == 0)
    }

    @Test func aCancelledWaiterLeavesTheQueue() async throws {
        let queue = UploadQueue(maximumRunning: 1, maximumWaiting: 3)
        let gate = Gate()
        let blocker = Task { try await queue.run(priority: .normal) { await gate.wait() } }
        try await waitUntil { queue.counts.running == 1 }
        let waiter = Task { try await queue.run(priority: .high) { "ran" } }
        try await waitUntil { queue.counts.waiting == 1 }
        waiter.cancel()
        await #expect {
            _ = try await waiter.value
        } throws: { ($0 as? UploaderError)?.code == .cancelled }
        #expect(queue.counts.waiting == 0)
        gate.open()
        try await blocker.value
        #expect(queue.counts.running == 0)
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<2000 {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(2))
        }
        Issue.record("condition never held")
    }
}
