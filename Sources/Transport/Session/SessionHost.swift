package import AetherIO
package import AetherSecurity
import Synchronization

/// The host's UDP driver: a `SessionTableStateMachine` in a Mutex, the handshake responders and record
/// channels it names, and a run loop on its own thread.
///
/// Datagrams are read with a short poll; the table's timers run from the injected clock. Callbacks run
/// after the lock is let go, so a callback may call `send`.
package final class SessionHost: Sendable {
    /// A key the host holds: its PSK and its entry in the table.
    package struct HostKey: Sendable {
        /// The table entry (key id, device, state).
        package let entry: SessionTableStateMachine.Key
        /// K_dev. A retired key keeps it: its tombstone is sealed inside a message 2 under it.
        package let psk: SymmetricKey

        /// Wraps a key.
        package init(entry: SessionTableStateMachine.Key, psk: SymmetricKey) {
            self.entry = entry
            self.psk = psk
        }
    }

    /// Something the host reports to its owner.
    package enum Event: Sendable {
        /// An application record arrived.
        case record(sessionID: UInt64, keyID: KeyID, type: UInt8, bytes: [UInt8])
        /// A session was committed.
        case committed(sessionID: UInt64, keyID: KeyID)
        /// A pending key was promoted to active (persist it).
        case keyPromoted(KeyID)
        /// A handshake was answered with a refusal (Stale, TooNew, PairAgain, SessionBusy, Tombstone).
        case refused(KeyID, Message2Payload)
        /// A session ended (BYE, liveness, superseded and drained, never committed).
        case discarded(sessionID: UInt64)
    }

    struct Channel: Sendable {
        var channel: SessionChannel
        var address: UDPAddress
        let keyID: KeyID
    }

    struct State: Sendable {
        var table: SessionTableStateMachine
        var psks: [KeyID: SymmetricKey]
        var channels: [UInt64: Channel] = [:]
        var counts = CountsAnswer(
            queryID: 0, recordsSealed: 0, recordsOpened: 0, authenticationFailures: 0, replaysRejected: 0,
            unknownControl: 0)
        var deadline: UInt64?
    }

    private struct Outbox {
        var datagrams: [([UInt8], UDPAddress)] = []
        var events: [Event] = []
    }

    /// The socket the host serves on.
    package let socket: UDPSocket
    private let clock: any AetherClock
    private let state: Mutex<State>
    private let loop: UDPRunLoop
    private let onEvent: @Sendable (Event) -> Void

    /// A host serving `keys` on `socket`, offering `limits`. `onEvent` runs on the run loop's thread.
    package init(
        socket: UDPSocket, keys: [HostKey], limits: SessionLimits = .standard, hostName: String = "aether",
        clock: any AetherClock = SystemClock(), onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.socket = socket
        self.clock = clock
        loop = UDPRunLoop(socket: socket, clock: clock)
        self.onEvent = onEvent
        var psks: [KeyID: SymmetricKey] = [:]
        for key in keys { psks[key.entry.keyID] = key.psk }
        state = Mutex(
            State(
                table: SessionTableStateMachine(keys: keys.map(\.entry), limits: limits, hostName: hostName),
                psks: psks))
    }

    /// Adds or replaces a key (a pairing made while the host runs).
    package func setKey(_ key: HostKey) {
        state.withLock { state in
            state.table.setKey(key.entry)
            state.psks[key.entry.keyID] = key.psk
        }
    }

    /// The host's counters.
    package var counts: CountsAnswer { state.withLock { $0.counts } }

    /// Uncommitted sessions (answered with an Accept, not yet confirmed).
    var pendingCount: Int { state.withLock { $0.table.pending.count } }

    /// The committed sessions.
    package var liveSessions: [UInt64] { state.withLock { $0.table.liveSessions } }

    /// Seals application data under a session (live or draining) and sends it to the session's address.
    package func send(sessionID: UInt64, type: UInt8, bytes: [UInt8]) throws(TransportError) {
        guard type < 0x40 else { throw TransportError(.invalidArgument, "application types are below 0x40") }
        let now = SessionTime(reading: clock)
        let datagram: ([UInt8], UDPAddress) = try state.withLock { (state) throws(TransportError) in
            guard state.table.opensRecords(sessionID), var channel = state.channels[sessionID] else {
                throw TransportError(.notConnected, "no session \(String(sessionID, radix: 16))")
            }
            let sealed: [UInt8]
            do throws(SecurityError) {
                sealed = try channel.channel.sealer.seal(innerType: type, plaintext: bytes)
            } catch {
                throw TransportError(.invalidArgument, "cannot seal the record: \(error.message)")
            }
            state.channels[sessionID] = channel
            state.counts.recordsSealed += 1
            state.table.recordSealed(sessionID, now: now)
            return (sealed, channel.address)
        }
        try socket.send(datagram.0, to: datagram.1)
    }

    /// Runs the loop on a new thread until `stop`.
    package func start() throws(TransportError) {
        try loop.start(role: "host") { [self] in run() }
    }

    /// Runs the loop on the calling thread until `stop`.
    package func run() {
        loop.run(
            deadline: { state.withLock { $0.deadline } },
            receive: { bytes, source in self.handle(bytes, from: source) },
            fireTimerIfDue: fireTimerIfDue)
    }

    /// Runs the state machine's timers when its deadline has passed (the run loop's step; tests call it
    /// directly with a manual clock).
    func fireTimerIfDue() {
        let now = SessionTime(reading: clock)
        guard let deadline = state.withLock({ $0.deadline }), now.monotonic >= deadline else { return }
        let outbox = state.withLock { state in
            var outbox = Outbox()
            state.deadline = nil
            Self.perform(state.table.timerFired(now: now), &state, &outbox, now: now)
            return outbox
        }
        flush(outbox)
    }

    /// Stops the loop and waits until it has ended (within one poll interval), so no thread is left
    /// using the crypto libraries when the process exits.
    package func stop() { loop.stop() }

    /// Handles one datagram (the run loop's step; tests call it directly).
    func handle(_ bytes: [UInt8], from source: UDPAddress) {
        guard bytes.count >= 2, bytes[1] == SessionWire.version else { return }
        let now = SessionTime(reading: clock)
        let outbox = state.withLock { state in
            var outbox = Outbox()
            switch bytes[0] {
            case SessionWire.message1Type: Self.message1(bytes, source, &state, &outbox, now: now)
            case SessionWire.recordType: Self.record(bytes, source, &state, &outbox, now: now)
            default: break
            }
            return outbox
        }
        flush(outbox)
    }

    private func flush(_ outbox: Outbox) {
        for (bytes, address) in outbox.datagrams { try? socket.send(bytes, to: address) }
        for event in outbox.events { onEvent(event) }
    }

    private static func message1(
        _ bytes: [UInt8], _ source: UDPAddress, _ state: inout State, _ outbox: inout Outbox, now: SessionTime
    ) {
        guard let message = try? Message1.parse(bytes) else { return }
        switch state.table.message1Arrived(bytes, keyID: message.keyID, source: source, now: now) {
        case .drop: return
        case .resend(let answer): outbox.datagrams.append((answer, source))
        case .handshake:
            guard let psk = state.psks[message.keyID],
                var responder = try? SessionResponder(message1: message, psk: psk),
                let payload = state.table.helloAuthenticated(responder.hello, now: now)
            else { return }
            guard let (message2, channel) = try? responder.answer(payload) else {
                if case .accept(let accept) = payload { state.table.acceptFailed(accept.sessionID) }
                return
            }
            if let channel {
                state.channels[channel.sessionID] = Channel(channel: channel, address: source, keyID: message.keyID)
            }
            if channel == nil { outbox.events.append(.refused(message.keyID, payload)) }
            perform(state.table.answered(message1: bytes, message2: message2, now: now), &state, &outbox, now: now)
            outbox.datagrams.append((message2, source))
        }
    }

    private static func record(
        _ bytes: [UInt8], _ source: UDPAddress, _ state: inout State, _ outbox: inout Outbox, now: SessionTime
    ) {
        guard bytes.count >= SessionWire.recordHeaderSize,
            let header = try? RecordHeader.parse(Array(bytes.prefix(SessionWire.recordHeaderSize))),
            state.table.opensRecords(header.sessionID), var channel = state.channels[header.sessionID]
        else { return }
        let content: RecordContent
        do {
            content = try channel.channel.opener.open(bytes)
        } catch {
            if error.code == .replayDetected { state.counts.replaysRejected += 1 }
            if error.code == .authenticationFailed { state.counts.authenticationFailures += 1 }
            return
        }
        state.counts.recordsOpened += 1
        switch content {
        case .unknownControl, .malformedControl: state.counts.unknownControl += 1
        default: break
        }
        // The source of an authenticated record is where the client is now (it may have moved).
        channel.address = source
        state.channels[header.sessionID] = channel
        perform(state.table.recordOpened(header.sessionID, content, now: now), &state, &outbox, now: now)
    }

    private static func perform(
        _ actions: [SessionTableStateMachine.Action], _ state: inout State, _ outbox: inout Outbox, now: SessionTime
    ) {
        for action in actions {
            switch action {
            case .send(let sessionID, let control):
                seal(control, sessionID, &state, &outbox, now: now)
            case .answerCounts(let sessionID, let queryID):
                var answer = state.counts
                answer.queryID = queryID
                seal(.countsAnswer(answer), sessionID, &state, &outbox, now: now)
            case .deliver(let sessionID, let type, let bytes):
                guard let keyID = state.channels[sessionID]?.keyID else { continue }
                outbox.events.append(.record(sessionID: sessionID, keyID: keyID, type: type, bytes: bytes))
            case .committed(let sessionID, let keyID):
                outbox.events.append(.committed(sessionID: sessionID, keyID: keyID))
            case .keyPromoted(let keyID):
                outbox.events.append(.keyPromoted(keyID))
            case .discard(let sessionID):
                state.channels[sessionID] = nil
                outbox.events.append(.discarded(sessionID: sessionID))
            case .scheduleTimer(let at):
                state.deadline = at
            }
        }
    }

    private static func seal(
        _ control: ControlMessage, _ sessionID: UInt64, _ state: inout State, _ outbox: inout Outbox, now: SessionTime
    ) {
        guard var channel = state.channels[sessionID], let sealed = try? channel.channel.sealer.seal(control) else {
            return
        }
        state.channels[sessionID] = channel
        state.counts.recordsSealed += 1
        state.table.recordSealed(sessionID, now: now)
        outbox.datagrams.append((sealed, channel.address))
    }
}
