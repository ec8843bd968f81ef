/// The commands other threads hand to the client's thread, and whether the client is shutting down. Pure; held
/// in a Mutex by `HTTPEventLoop`.
struct HTTPEventLoopStateMachine {
    enum Command {
        /// Add a transfer to the multi handle.
        case start(HTTPTransfer)
        /// Stop a transfer now (task cancellation).
        case cancel(UInt64)
        /// More body bytes are ready: unpause the transfer.
        case resume(UInt64)
        /// The network path changed (the reason, for the message): fail every running transfer as a closed connection
        /// and reuse no connection opened before now.
        case abandonAll(String)
    }

    private var commands: [Command] = []
    private(set) var shuttingDown = false

    /// Queues a command; false once the client is shutting down (the caller fails the request itself).
    mutating func submit(_ command: Command) -> Bool {
        guard !shuttingDown else { return false }
        commands.append(command)
        return true
    }

    /// Starts the shutdown; true the first time.
    mutating func shutDown() -> Bool {
        defer { shuttingDown = true }
        return !shuttingDown
    }

    /// Takes every queued command, oldest first.
    mutating func drain() -> (commands: [Command], shuttingDown: Bool) {
        defer { commands.removeAll(keepingCapacity: true) }
        return (commands, shuttingDown)
    }
}
