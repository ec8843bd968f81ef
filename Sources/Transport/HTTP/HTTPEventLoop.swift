import Synchronization

/// The client's one thread: it owns the libcurl multi handle, adds and removes transfers on command, drives them
/// with `curl_multi_perform`, sleeps in `curl_multi_poll`, and is woken by `curl_multi_wakeup` whenever another
/// thread queues a command (a new request, a cancellation, body bytes ready).
final class HTTPEventLoop: @unchecked Sendable {
    // @unchecked: `multi`'s transfer calls and `active` are used only on the loop's thread; `state` is a Mutex,
    // and `multi.wakeup()` is the one libcurl call documented as safe from any thread.
    private let multi: CurlMulti
    private let configuration: HTTPClientConfiguration
    private let state = Mutex(HTTPEventLoopStateMachine())
    private let nextID = Atomic<UInt64>(1)
    private var active: [UInt64: HTTPTransfer] = [:]
    private var byHandle: [Int: UInt64] = [:]
    private var lastDeadlineCheck = ContinuousClock.now
    /// When the path last changed (`abandonAll`): connections opened before it are not reused.
    private var pathChanged: ContinuousClock.Instant?

    init(configuration: HTTPClientConfiguration) throws(TransportError) {
        self.configuration = configuration
        multi = try CurlMulti()
    }

    /// Starts the thread.
    func start() throws(TransportError) {
        do {
            try Socket.spawnThread { self.run() }
        } catch {
            throw TransportError(.systemCall, "cannot start the HTTP client thread: \(error.text)")
        }
    }

    func makeTransfer(_ request: HTTPRequest) -> HTTPTransfer {
        HTTPTransfer(
            id: nextID.add(1, ordering: .relaxed).oldValue, request: request,
            maximumHeaderBytes: configuration.maximumHeaderBytes)
    }

    /// Queues a command and wakes the thread; false once the client is shutting down.
    @discardableResult
    func submit(_ command: HTTPEventLoopStateMachine.Command) -> Bool {
        guard state.withLock({ $0.submit(command) }) else { return false }
        multi.wakeup()
        return true
    }

    /// Asks the thread to fail every transfer still running with `.cancelled`, close the connections and end.
    /// Returns at once (it may run on the loop's own thread, when a callback drops the last reference).
    func shutDown() {
        guard state.withLock({ $0.shutDown() }) else { return }
        multi.wakeup()
    }

    // MARK: The thread

    private func run() {
        while true {
            let (commands, shuttingDown) = state.withLock { $0.drain() }
            for command in commands { handle(command) }
            if shuttingDown {
                for transfer in active.values {
                    stop(transfer, TransportError(.cancelled, "the HTTP client shut down"))
                }
                multi.close()
                return
            }
            multi.perform()
            while let done = multi.nextDone() { complete(handle: done.handle, code: done.code) }
            stopOverdue()
            multi.poll(milliseconds: 1000)
        }
    }

    private func handle(_ command: HTTPEventLoopStateMachine.Command) {
        switch command {
        case .start(let transfer):
            guard !transfer.cancelRequested.load(ordering: .acquiring) else {
                transfer.finish(.failure(TransportError(.cancelled, "the request was cancelled before it started")))
                return
            }
            do throws(TransportError) {
                let easy = try CurlEasy(transfer: transfer, configuration: configuration)
                if let pathChanged {
                    // A connection older than the time since the path changed was opened on the old path. Whole
                    // seconds, at least one; ten minutes on, the old connections have long been closed as idle.
                    let since = pathChanged.duration(to: .now) / .seconds(1)
                    if since < 600 { try easy.reuseOnlyConnectionsYoungerThan(seconds: max(1, Int(since))) }
                }
                transfer.easy = easy
                let id = transfer.id
                transfer.bodyStream?.attach { [weak self] in self?.submit(.resume(id)) }
                try multi.add(easy)
                active[id] = transfer
                byHandle[easy.key] = id
            } catch {
                transfer.easy = nil
                transfer.finish(.failure(error))
            }
        case .cancel(let id):
            // Not yet started: `.start` sees the flag. Already finished: nothing to do.
            guard let transfer = active[id] else { return }
            stop(transfer, TransportError(.cancelled, "the request was cancelled"))
        case .resume(let id):
            active[id]?.easy?.unpause()
        case .abandonAll(let reason):
            pathChanged = .now
            for transfer in Array(active.values) {
                stop(
                    transfer,
                    TransportError(.connectionClosed, "the request was abandoned: the network path changed (\(reason))")
                )
            }
        }
    }

    /// Fails every transfer whose answer is past its deadline (`HTTPTimeouts.firstByte`, `answer`) with `.timedOut`;
    /// its connection is closed. Run at most four times a second (a busy loop turns thousands of times a second, and
    /// each look costs two calls per transfer), and at least once a second (the poll's longest wait).
    private func stopOverdue() {
        let now = ContinuousClock.now
        guard lastDeadlineCheck.duration(to: now) >= .milliseconds(250) else { return }
        lastDeadlineCheck = now
        var overdue: [(HTTPTransfer, String)] = []
        for transfer in active.values {
            guard let easy = transfer.easy,
                let reason = transfer.overdue(started: easy.requestStarted, queued: easy.hasQueuedBytes)
            else { continue }
            overdue.append((transfer, reason))
        }
        for (transfer, reason) in overdue { stop(transfer, TransportError(.timedOut, reason)) }
    }

    /// Removes a transfer from the multi handle at once (its connection is closed, not reused) and fails it.
    private func stop(_ transfer: HTTPTransfer, _ error: TransportError) {
        detach(transfer)
        transfer.finish(.failure(error))
    }

    private func complete(handle: Int, code: CurlCode) {
        guard let id = byHandle[handle], let transfer = active[id], let easy = transfer.easy else { return }
        let result = easy.outcome(code: code, transfer: transfer)
        detach(transfer)
        transfer.finish(result)
    }

    private func detach(_ transfer: HTTPTransfer) {
        if let easy = transfer.easy {
            multi.remove(easy)
            byHandle[easy.key] = nil
        }
        transfer.easy = nil
        active[transfer.id] = nil
    }
}
