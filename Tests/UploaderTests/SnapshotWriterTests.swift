import Dispatch
import Synchronization
import Testing

@testable import AetherUploader

@Suite struct SnapshotWriterTests {
    @Test func eachSubmitStoresAtOnceWhenNothingIsRunning() throws {
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        let writer = SnapshotWriter(vault: vault, key: "k")
        try writer.submit([1])
        #expect(try vault.load(key: "k") == .snapshot([1]))
        try writer.submit([2])
        #expect(try vault.load(key: "k") == .snapshot([2]))
        #expect(!writer.hasPending)
    }

    @Test func snapshotsSubmittedDuringAStoreCollapseToTheNewest() throws {
        let calls = Mutex<[[UInt8]]>([])
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let writer = SnapshotWriter { snapshot in
            let first = calls.withLock { (all) -> Bool in
                all.append(snapshot)
                return all.count == 1
            }
            if first {
                entered.signal()
                proceed.wait()
            }
        }
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? writer.submit([1])
            done.signal()
        }
        entered.wait()
        // A store is running: these return at once and leave the newest pending.
        try writer.submit([2])
        try writer.submit([3])
        #expect(writer.hasPending)
        #expect(calls.withLock { $0 } == [[1]])
        proceed.signal()
        done.wait()
        #expect(calls.withLock { $0 } == [[1], [3]])
        #expect(!writer.hasPending)
    }

    @Test func aFailedStoreStaysPendingUntilFlushWritesIt() throws {
        let calls = Mutex<[[UInt8]]>([])
        let failures = Mutex(1)
        let writer = SnapshotWriter { (snapshot) throws(UploaderError) in
            calls.withLock { $0.append(snapshot) }
            let fail = failures.withLock { (left) -> Bool in
                defer { left = max(0, left - 1) }
                return left > 0
            }
            if fail { throw UploaderError(.systemCall, "disk full") }
        }
        let error = #expect(throws: UploaderError.self) { try writer.submit([7]) }
        #expect(error?.code == .systemCall)
        #expect(writer.hasPending)
        try writer.flush()
        #expect(calls.withLock { $0 } == [[7], [7]])
        #expect(!writer.hasPending)
        try writer.flush()
        #expect(calls.withLock { $0 }.count == 2)
    }
}
