import AetherTransport
import Dispatch
import Synchronization

/// The one place where the synchronous `BlobStore` API waits for the asynchronous S3 client.
///
/// The store is called on the HTTP server's own threads (libmicrohttpd's), which may block. The request runs as a
/// task whose executor preference is `S3BlobExecutor`, a serial dispatch queue of its own: neither the task's start
/// nor its resumption after the HTTP client answers needs a thread of Swift's cooperative pool, so a caller that
/// blocks one of those threads (a test calling the store from an `async` function) slows the pool down but cannot
/// deadlock it. The caller waits on a semaphore until the task has stored its result.
enum S3BlobBridge {
    /// The executor every S3 blob request runs on.
    static let executor = S3BlobExecutor()

    /// Runs `operation` to its end and returns its result, blocking the calling thread meanwhile.
    static func run<T: Sendable>(_ operation: @escaping @Sendable () async throws(TransportError) -> T)
        throws(TransportError) -> T
    {
        let outcome = Outcome<T>()
        Task(executorPreference: executor) {
            let result: Result<T, TransportError>
            do throws(TransportError) {
                result = .success(try await operation())
            } catch {
                result = .failure(error)
            }
            outcome.finish(result)
        }
        return try outcome.wait().get()
    }

    /// A result handed from the task to the waiting thread.
    private final class Outcome<T: Sendable>: Sendable {
        private let result = Mutex<Result<T, TransportError>?>(nil)
        private let done = DispatchSemaphore(value: 0)

        func finish(_ value: Result<T, TransportError>) {
            result.withLock { $0 = value }
            done.signal()
        }

        func wait() -> Result<T, TransportError> {
            done.wait()
            return result.withLock { $0 }
                ?? .failure(TransportError(.cancelled, "the S3 request ended without a result"))
        }
    }
}

/// A task executor on one serial dispatch queue (see `S3BlobBridge`).
final class S3BlobExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "aether.receiver.s3blob")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = unsafe asUnownedTaskExecutor()
        queue.async { unsafe job.runSynchronously(on: executor) }
    }
}
