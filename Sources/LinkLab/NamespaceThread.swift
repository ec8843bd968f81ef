import Dispatch
import Foundation
import Synchronization

/// Runs a closure on a thread of its own inside a network namespace: the thread enters the namespace (setns),
/// runs the closure, returns to where it was and ends. Sockets and TUN devices made there stay in that namespace.
enum NamespaceThread {
    /// The closure's result, handed from the thread to the caller.
    private final class Outcome<T: Sendable>: Sendable {
        let value = Mutex<Result<T, any Error>?>(nil)
    }

    /// Runs `body` inside the namespace file `path` (/run/netns/NAME) and returns what it returned; the caller
    /// waits (briefly: the closure's own time).
    static func run<T: Sendable>(in path: String, _ body: @escaping @Sendable () throws -> T) throws -> T {
        let outcome = Outcome<T>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let result = Result<T, any Error> {
                let original = try NetworkNamespace.open("/proc/thread-self/ns/net")
                defer { RelayTimer.close(original) }
                let target = try NetworkNamespace.open(path)
                defer { RelayTimer.close(target) }
                try NetworkNamespace.enter(target, name: path)
                defer { try? NetworkNamespace.enter(original, name: "the original namespace") }
                return try body()
            }
            outcome.value.withLock { $0 = result }
            done.signal()
        }
        thread.name = "aether-lab-namespace"
        thread.start()
        done.wait()
        guard let result = outcome.value.withLock({ $0 }) else {
            throw LinkLabError(.setupFailed, "the namespace thread ended without a result")
        }
        return try result.get()
    }
}
