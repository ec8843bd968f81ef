import Dispatch
import Synchronization

/// What the relay thread, the address thread and the lab's callers share: commands in, counters out, behind one
/// lock; pipes that wake the two threads; semaphores they signal when they end.
final class RelayShared: Sendable {
    /// A client address to replace (run by the address thread, which may start processes; the relay never waits).
    struct AddressJob: Sendable, Equatable {
        let old: UInt32
        let new: UInt32
    }

    /// The shared state.
    struct State: Sendable {
        var stop = false
        /// A clock restart the relay has not applied yet (monotonic nanoseconds of the new zero).
        var restartAt: Int64?
        /// Path changes asked for by `LinkLab.changePath`, not begun yet.
        var manualChanges: [(kind: LinkLabPathChangeKind, window: Int64)] = []
        /// Address replacements the address thread has not run yet.
        var addressJobs: [AddressJob] = []
        /// The client's current address (host order), as set in its namespace.
        var clientAddress: UInt32
        /// Address replacements done.
        var addressChanges: Int64 = 0
        /// The last failure of the address thread, for the lab's callers.
        var lastError: String?
        var counters = LinkLabCounters()
    }

    let state: Mutex<State>
    /// Wakes the relay (read end polled by it).
    let relayWake: (read: Int32, write: Int32)
    /// Wakes the address thread.
    let addressWake: (read: Int32, write: Int32)
    /// Signalled once by each thread as it ends.
    let relayEnded = DispatchSemaphore(value: 0)
    let addressEnded = DispatchSemaphore(value: 0)

    init(clientAddress: UInt32) throws(LinkLabError) {
        state = Mutex(State(clientAddress: clientAddress))
        relayWake = try RelayTimer.pipe()
        do {
            addressWake = try RelayTimer.pipe()
        } catch {
            RelayTimer.close(relayWake.read)
            RelayTimer.close(relayWake.write)
            throw error
        }
    }

    func wakeRelay() { RelayTimer.signal(relayWake.write) }
    func wakeAddressThread() { RelayTimer.signal(addressWake.write) }

    /// Closes the pipes (after both threads ended).
    func closePipes() {
        for descriptor in [relayWake.read, relayWake.write, addressWake.read, addressWake.write] {
            RelayTimer.close(descriptor)
        }
    }
}
