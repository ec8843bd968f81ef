package import AetherIO
package import AetherSecurity
import Synchronization

/// The device's UDP driver: a `ReconnectStateMachine` in a Mutex, the handshake initiators and record
/// channels of its attempts, and a run loop on its own thread.
///
/// Events run after the lock is let go, on the run loop's thread (or the caller's, for `connect`/`close`).
package final class SessionClient: Sendable {
    /// Something the client reports to its owner.
    package enum Event: Sendable {
        /// A session became live.
        case up(ReconnectStateMachine.SessionInfo)
        /// The live session ended.
        case down(sessionID: UInt64, reason: ReconnectStateMachine.DownReason)
        /// Application data arrived.
        case record(type: UInt8, bytes: [UInt8])
        /// The host answered a counts query.
        case counts(CountsAnswer)
        /// The host's view of this device's keys.
        case slotStatus(SlotStatus)
        /// A connect cycle under a key ended.
        case cycleEnded(KeyID, answered: Bool)
        /// The host asked to pair again.
        case suggestPairing(KeyID)
        /// The host proved it deleted the key.
        case tombstoned(KeyID, retiredAt: UInt64)
        /// No more attempts for the current intent.
        case gaveUp(KeyID, ReconnectStateMachine.GiveUpReason)
    }

    struct State: Sendable {
        var machine: ReconnectStateMachine
        var psks: [KeyID: SymmetricKey]
        var initiators: [AttemptID: SessionInitiator] = [:]
        var wireIDs: [UInt64: AttemptID] = [:]
        var channels: [AttemptID: SessionChannel] = [:]
        var deadline: UInt64?
    }

    private struct Outbox {
        var datagrams: [[UInt8]] = []
        var events: [Event] = []
    }

    /// The client's socket.
    package let socket: UDPSocket
    /// Where the host is.
    package let host: UDPAddress
    private let clock: any AetherClock
    private let state: Mutex<State>
    private let loop: UDPRunLoop
    private let onEvent: @Sendable (Event) -> Void

    /// A client that talks to `host` from `socket` under the given keys (id → K_dev).
    package init(
        socket: UDPSocket, host: UDPAddress, keys: [KeyID: SymmetricKey],
        clock: any AetherClock = SystemClock(),
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.socket = socket
        self.host = host
        self.clock = clock
        loop = UDPRunLoop(socket: socket, clock: clock)
        self.onEvent = onEvent
        state = Mutex(State(machine: ReconnectStateMachine(), psks: keys))
    }

    /// The ids of the keys the client holds.
    var knownKeys: [KeyID] { state.withLock { $0.psks.keys.sorted() } }

    /// The live session, if any.
    package var liveSession: ReconnectStateMachine.SessionInfo? { state.withLock { $0.machine.liveSession } }

    /// Wants a session under `keyID` (`pending`: the first connect asks the host to promote the key).
    package func connect(keyID: KeyID, pending: Bool) throws(TransportError) {
        let now = SessionTime(reading: clock)
        let outbox = try state.withLock { (state) throws(TransportError) in
            guard state.psks[keyID] != nil else { throw TransportError(.unknownKey, "no paired key \(keyID)") }
            var outbox = Outbox()
            Self.perform(state.machine.want(keyID, pending: pending, now: now), &state, &outbox, now: now)
            return outbox
        }
        flush(outbox)
    }

    /// Seals application data (inner type below 0x40) under the live session.
    package func send(type: UInt8, bytes: [UInt8]) throws(TransportError) {
        guard type < 0x40 else { throw TransportError(.invalidArgument, "application types are below 0x40") }
        try sealLive(innerType: type, plaintext: bytes)
    }

    /// Asks the host for its counters (the answer arrives as `.counts`).
    package func queryCounts(id: UInt32) throws(TransportError) {
        try sealLive(control: .countsQuery(queryID: id))
    }

    /// Closes the live session with a sealed BYE; no further attempts.
    package func close() {
        let now = SessionTime(reading: clock)
        let outbox = state.withLock { state in
            var outbox = Outbox()
            Self.perform(state.machine.close(now: now), &state, &outbox, now: now)
            return outbox
        }
        flush(outbox)
    }

    /// The network path changed: reconnect (superseding the live session without a BYE).
    package func networkChanged() {
        let now = SessionTime(reading: clock)
        let outbox = state.withLock { state in
            var outbox = Outbox()
            Self.perform(state.machine.networkChanged(now: now), &state, &outbox, now: now)
            return outbox
        }
        flush(outbox)
    }

    /// Runs the loop on a new thread until `stop`.
    package func start() throws(TransportError) {
        try loop.start(role: "client") { [self] in run() }
    }

    /// Runs the loop on the calling thread until `stop`.
    package func run() {
        loop.run(
            deadline: { state.withLock { $0.deadline } },
            receive: { bytes, source in if source == self.host { self.handle(bytes) } },
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
            Self.perform(state.machine.timerFired(now: now), &state, &outbox, now: now)
            return outbox
        }
        flush(outbox)
    }

    /// Stops the loop and waits until it has ended (within one poll interval), so no thread is left
    /// using the crypto libraries when the process exits.
    package func stop() { loop.stop() }

    /// Handles one datagram from the host.
    func handle(_ bytes: [UInt8]) {
        guard bytes.count >= 2, bytes[1] == SessionWire.version else { return }
        let now = SessionTime(reading: clock)
        let outbox = state.withLock { state in
            var outbox = Outbox()
            switch bytes[0] {
            case SessionWire.message2Type: Self.message2(bytes, &state, &outbox, now: now)
            case SessionWire.recordType: Self.record(bytes, &state, &outbox, now: now)
            default: break
            }
            return outbox
        }
        flush(outbox)
    }

    private func sealLive(innerType: UInt8 = 0, plaintext: [UInt8] = [], control: ControlMessage? = nil)
        throws(TransportError)
    {
        let now = SessionTime(reading: clock)
        let outbox = try state.withLock { (state) throws(TransportError) in
            guard let live = state.machine.liveSession, var channel = state.channels[live.attemptID] else {
                throw TransportError(.notConnected, "no live session")
            }
            guard plaintext.count <= Int(live.limits.maxRecordPlaintext) else {
                throw TransportError(
                    .invalidArgument,
                    "record of \(plaintext.count) bytes exceeds the host's \(live.limits.maxRecordPlaintext)")
            }
            let counter = channel.sealer.nextCounter
            guard counter <= UInt64(live.limits.maxCounter) else {
                throw TransportError(.notConnected, "the session reached its counter limit")
            }
            let sealed: [UInt8]
            do throws(SecurityError) {
                if let control {
                    sealed = try channel.sealer.seal(control)
                } else {
                    sealed = try channel.sealer.seal(innerType: innerType, plaintext: plaintext)
                }
            } catch {
                throw TransportError(.invalidArgument, "cannot seal the record: \(error.message)")
            }
            state.channels[live.attemptID] = channel
            var outbox = Outbox()
            outbox.datagrams.append(sealed)
            Self.perform(
                state.machine.recordSealed(live.attemptID, counter: counter, now: now), &state, &outbox, now: now)
            return outbox
        }
        flush(outbox)
    }

    private func flush(_ outbox: Outbox) {
        for bytes in outbox.datagrams { try? socket.send(bytes, to: host) }
        for event in outbox.events { onEvent(event) }
    }

    private static func message2(_ bytes: [UInt8], _ state: inout State, _ outbox: inout Outbox, now: SessionTime) {
        guard let message = try? Message2.parse(bytes), let id = state.wireIDs[message.attemptID],
            state.machine.acceptsMessage2(id), var initiator = state.initiators[id]
        else { return }
        // Framing or authentication failures change nothing: the attempt still takes a valid message 2.
        guard let outcome = try? initiator.receive(message2: bytes) else { return }
        state.initiators[id] = initiator
        let answer: ReconnectStateMachine.Answer
        switch outcome {
        case .accepted(let accept, let channel):
            state.channels[id] = channel
            answer = .accept(
                sessionID: accept.sessionID, hostTime: accept.hostTime,
                limits: SessionLimits(
                    livenessTimeout: accept.livenessTimeoutMilliseconds, maxSessionAge: accept.maxSessionAgeSeconds,
                    maxCounter: accept.maxCounter, maxRecordPlaintext: accept.maxRecordPlaintext),
                slots: accept.slots, hostName: accept.hostName)
        case .refused(.stale(let stale)): answer = .stale(hostTime: stale.hostTime)
        case .refused(.tooNew(let tooNew)): answer = .tooNew(hostTime: tooNew.hostTime)
        case .refused(.pairAgain): answer = .pairAgain
        case .refused(.sessionBusy(let busy)): answer = .sessionBusy(retryAfter: busy.retryAfterMilliseconds)
        case .refused(.tombstone(let tombstone)): answer = .tombstone(retiredAt: tombstone.retiredAt)
        case .refused(.accept), .unparseable: answer = .unparseable
        }
        perform(state.machine.message2(id, answer, now: now), &state, &outbox, now: now)
    }

    private static func record(_ bytes: [UInt8], _ state: inout State, _ outbox: inout Outbox, now: SessionTime) {
        guard bytes.count >= SessionWire.recordHeaderSize,
            let header = try? RecordHeader.parse(Array(bytes.prefix(SessionWire.recordHeaderSize))),
            let id = state.machine.attempt(forSession: header.sessionID), var channel = state.channels[id],
            let content = try? channel.opener.open(bytes)
        else { return }
        state.channels[id] = channel
        perform(state.machine.recordOpened(id, counter: header.counter, content, now: now), &state, &outbox, now: now)
    }

    private static func perform(
        _ actions: [ReconnectStateMachine.Action], _ state: inout State, _ outbox: inout Outbox, now: SessionTime
    ) {
        for action in actions {
            switch action {
            case .sendMessage1(let id, let hello):
                guard let psk = state.psks[hello.keyID],
                    let wireHello = try? Hello(
                        intent: hello.intent, timestamp: hello.timestamp, keyID: hello.keyID,
                        previousSessionID: hello.previousSessionID),
                    let initiator = try? SessionInitiator(hello: wireHello, psk: psk)
                else { continue }
                state.initiators[id] = initiator
                state.wireIDs[initiator.attemptID] = id
                outbox.datagrams.append(initiator.message1)
            case .resendMessage1(let id):
                if let initiator = state.initiators[id] { outbox.datagrams.append(initiator.message1) }
            case .sendConfirm(let id): seal(.confirm, id, &state, &outbox, now: now)
            case .sendKeepAlive(let id): seal(.keepAlive, id, &state, &outbox, now: now)
            case .sendBye(let id, let reason): seal(.bye(reason), id, &state, &outbox, now: now)
            case .discard(let id):
                if let initiator = state.initiators.removeValue(forKey: id) { state.wireIDs[initiator.attemptID] = nil }
                state.channels[id] = nil
            case .deliver(let type, let body): outbox.events.append(.record(type: type, bytes: body))
            case .countsAnswer(let answer): outbox.events.append(.counts(answer))
            case .sessionUp(let info): outbox.events.append(.up(info))
            case .sessionDown(let sessionID, let reason):
                outbox.events.append(.down(sessionID: sessionID, reason: reason))
            case .slotStatus(let slots): outbox.events.append(.slotStatus(slots))
            case .cycleEnded(let keyID, let answered): outbox.events.append(.cycleEnded(keyID, answered: answered))
            case .suggestPairing(let keyID): outbox.events.append(.suggestPairing(keyID))
            case .keyTombstoned(let keyID, let retiredAt):
                state.psks[keyID] = nil
                outbox.events.append(.tombstoned(keyID, retiredAt: retiredAt))
            case .gaveUp(let keyID, let reason): outbox.events.append(.gaveUp(keyID, reason))
            case .scheduleTimer(let at): state.deadline = at
            }
        }
    }

    private static func seal(
        _ control: ControlMessage, _ id: AttemptID, _ state: inout State, _ outbox: inout Outbox, now: SessionTime
    ) {
        guard var channel = state.channels[id] else { return }
        let counter = channel.sealer.nextCounter
        guard let sealed = try? channel.sealer.seal(control) else { return }
        state.channels[id] = channel
        outbox.datagrams.append(sealed)
        let follow = state.machine.recordSealed(id, counter: counter, now: now)
        perform(follow, &state, &outbox, now: now)
    }
}
