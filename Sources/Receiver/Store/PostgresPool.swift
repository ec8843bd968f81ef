import Dispatch
import Synchronization

/// A small pool of libpq connections: at most `size` open at once, idle ones reused, a connection that the server
/// dropped (or that an error left inside a transaction) closed instead of reused, so the next borrower reconnects.
/// A borrower that waits longer than `waitMilliseconds` for a free connection gets `.unavailable`.
final class PostgresPool: Sendable {
    private let conninfo: String
    private let statementTimeoutMilliseconds: Int
    private let waitMilliseconds: Int
    private let idle = Mutex<[PostgresConnection]>([])
    private let slots: DispatchSemaphore
    /// How many connections it may hold.
    let size: Int

    init(conninfo: String, size: Int, statementTimeoutMilliseconds: Int, waitMilliseconds: Int) {
        self.conninfo = conninfo
        self.size = max(size, 1)
        self.statementTimeoutMilliseconds = statementTimeoutMilliseconds
        self.waitMilliseconds = waitMilliseconds
        slots = DispatchSemaphore(value: max(size, 1))
    }

    /// Runs `body` with a connection of its own.
    func withConnection<T>(_ body: (PostgresConnection) throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        guard slots.wait(timeout: .now() + .milliseconds(waitMilliseconds)) == .success else {
            throw ReceiverError(.unavailable, "all \(size) catalogue connections are busy; retry")
        }
        defer { slots.signal() }
        let connection: PostgresConnection
        if let reused = idle.withLock({ $0.popLast() }) {
            connection = reused
        } else {
            connection = try PostgresConnection(
                conninfo: conninfo, statementTimeoutMilliseconds: statementTimeoutMilliseconds)
        }
        do throws(ReceiverError) {
            let result = try body(connection)
            if connection.isReusable { idle.withLock { $0.append(connection) } }
            return result
        } catch {
            if connection.isReusable {
                idle.withLock { $0.append(connection) }
            } else if error.code == .unavailable {
                // The server went away: the idle connections are as dead as this one; the next borrower reconnects.
                drain()
            }
            throw error
        }
    }

    /// Closes the idle connections (the server restarted, or the receiver stops).
    func drain() {
        let dropped = idle.withLock { connections in
            defer { connections.removeAll() }
            return connections
        }
        _ = dropped.count
    }
}
