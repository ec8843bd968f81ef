import Synchronization

/// Watches link and route changes on rtnetlink and publishes them as an `AsyncStream` with a bounded buffer (the
/// newest events are kept when the consumer lags). Path changes (link state, default routes) are also passed to
/// the responders — the Kalman predictor raises its process noise.
///
/// The receive loop runs on its own thread (a blocking `recv` with a 100 ms timeout) so it never blocks the
/// cooperative pool. `namespacePath` observes another network namespace (`/run/netns/NAME`). The thread holds the
/// observer until `stop()` is called, so call it when done.
public final class NetworkPathObserver: Sendable {
    private struct State: Sendable {
        var running = false
        var knownLinks: [Int32: NetworkLink] = [:]
    }

    private let namespacePath: String?
    private let classifier: InterfaceClassifier
    private let responders: [any PathChangeResponder]
    private let bufferLimit: Int
    private let state = Mutex(State())
    private let stopRequested = Atomic<Bool>(false)
    private let thread = Mutex<Netlink.ThreadHandle?>(nil)
    private let system: NetlinkSystem

    /// Creates an observer; nothing runs until `start()`.
    public convenience init(
        namespacePath: String? = nil, sysfsRoot: String = "", responders: [any PathChangeResponder] = [],
        bufferLimit: Int = 64
    ) {
        self.init(
            namespacePath: namespacePath, sysfsRoot: sysfsRoot, responders: responders, bufferLimit: bufferLimit,
            system: .live)
    }

    /// An observer on the given system calls (tests inject failures through `system`).
    init(
        namespacePath: String?, sysfsRoot: String, responders: [any PathChangeResponder], bufferLimit: Int,
        system: NetlinkSystem
    ) {
        self.namespacePath = namespacePath
        classifier = InterfaceClassifier(root: sysfsRoot)
        self.responders = responders
        self.bufferLimit = max(1, bufferLimit)
        self.system = system
    }

    /// Opens the socket and starts the receive thread; the stream ends after `stop()`.
    public func start() throws(SchedulingError) -> AsyncStream<NetworkPathEvent> {
        let already = state.withLock { s in
            defer { s.running = true }
            return s.running
        }
        guard !already else { throw SchedulingError(.invalidArgument, "the path observer is already running") }
        let fd: Int32
        do throws(SchedulingError) {
            fd = try system.openSocket(namespacePath)
        } catch {
            state.withLock { $0.running = false }
            throw error
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: NetworkPathEvent.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        stopRequested.store(false, ordering: .sequentiallyConsistent)
        let handle: Netlink.ThreadHandle
        do throws(SchedulingError) {
            handle = try system.spawn { [self] in
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while !stopRequested.load(ordering: .sequentiallyConsistent) {
                    let count = system.receive(fd, &buffer)
                    if count < 0 { break }
                    if count == 0 { continue }
                    let datagram = NetlinkParser.read(Array(buffer[0..<count]))
                    for event in datagram.events { deliver(event, to: continuation) }
                    for damage in datagram.damaged { continuation.yield(.unreadableMessage(damage.message)) }
                }
                system.closeSocket(fd)
                continuation.finish()
            }
        } catch {
            // No thread will ever close the socket or end the stream: do both here, and allow a new start().
            system.closeSocket(fd)
            continuation.finish()
            state.withLock { $0.running = false }
            throw error
        }
        thread.withLock { $0 = handle }
        return stream
    }

    /// Stops the receive thread and waits for it.
    public func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        if let handle = thread.withLock({ h in
            defer { h = nil }; return h
        }) {
            Netlink.join(handle)
        }
        state.withLock { $0.running = false }
    }

    private func deliver(_ raw: NetworkPathEvent, to continuation: AsyncStream<NetworkPathEvent>.Continuation) {
        var event = raw
        switch raw {
        case .linkAdded(var link):
            link.kind = classifier.classify(link)
            let known = state.withLock { s in
                defer { s.knownLinks[link.index] = link }
                return s.knownLinks[link.index]
            }
            if let known {
                if known == link { return }  // a repeat with nothing new
                event = .linkChanged(link)
            } else {
                event = .linkAdded(link)
            }
        case .linkRemoved(var link):
            let known = state.withLock { $0.knownLinks.removeValue(forKey: link.index) }
            link.kind = known?.kind ?? classifier.classify(link)
            event = .linkRemoved(link)
        case .linkChanged, .routeAdded, .routeRemoved, .unreadableMessage:
            break
        }
        if event.changesPath { for responder in responders { responder.pathDidChange() } }
        continuation.yield(event)
    }
}
