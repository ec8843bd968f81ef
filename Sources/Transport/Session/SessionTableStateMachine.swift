package import AetherSecurity

/// The host's session table as a pure state machine (secure-session doc section 2.3 "Host rules").
///
/// It decides; the driver (`SessionHost`) does the cryptography and the I/O. For each message 1 the driver
/// asks `message1Arrived` (rate limit, answer cache, known key), runs the responder when told to, then
/// asks `helloAuthenticated` which answer to seal and reports the sealed bytes with `answered` so an
/// identical message 1 gets the same message 2 for 2 s without running the handshake again.
///
/// Rules: unknown key ids get no answer; a deleted key is refused with its tombstone; a key the host
/// refuses gets PairAgain; a hello timestamp not newer than the last accepted under its key, or older
/// than host time − 120 s, is Stale, one newer than host time + 30 s is TooNew; a full table or too many
/// uncommitted attempts under the key is SessionBusy; otherwise Accept. The session is committed by the
/// first authenticated record that proves it (never an unknown control type); a committed session
/// supersedes the device's live one without a BYE, and the old one drains (still opens records) for
/// 1 s. A live session with no authenticated record within the liveness timeout is closed.
package struct SessionTableStateMachine: Sendable {
    /// Constants of the host's table.
    package enum Timing {
        /// How long a message 2 is kept for identical message 1s.
        package static let answerCacheWindow: UInt64 = 2_000
        /// An uncommitted session lives as long as the client may still confirm or receive it: 2 s + 11 s.
        package static let pendingWindow: UInt64 = 13_000
        /// A superseded session drains this long.
        package static let drainWindow: UInt64 = 1_000
        /// Uncommitted sessions per key (one confirming plus six receive-only on the client).
        package static let maxPendingPerKey = 7
        /// Message 1s a source may send in a burst, and per second after it.
        package static let message1Burst: UInt64 = 20
        /// See `message1Burst`.
        package static let message1PerSecond: UInt64 = 10
        /// Sources whose buckets are remembered (idle full ones are forgotten first).
        package static let maxSources = 4_096
    }

    /// How the host holds a key.
    package enum KeyState: Sendable, Hashable {
        /// Sessions are opened under it.
        case active
        /// Paired; the first promote connect makes it active.
        case pending
        /// Known, but no new sessions: answered with PairAgain.
        case refused
        /// Deleted at `retiredAt` (ms): answered with its tombstone.
        case retired(retiredAt: UInt64)
    }

    /// A key of the table and the device (key store item) it belongs to.
    package struct Key: Sendable, Hashable {
        /// The key id.
        package let keyID: KeyID
        /// The device; sessions of one device supersede each other and share a slot status.
        package let device: HostID
        /// How the host holds it.
        package var state: KeyState

        /// Wraps a key entry.
        package init(keyID: KeyID, device: HostID, state: KeyState) {
            self.keyID = keyID
            self.device = device
            self.state = state
        }
    }

    /// What to do with an arrived message 1 (after framing).
    package enum Message1Decision: Sendable, Hashable {
        /// No answer (rate limited, unknown key).
        case drop
        /// Send this cached message 2 again; do not run the handshake.
        case resend([UInt8])
        /// Run the responder under this key's PSK, then call `helloAuthenticated`.
        case handshake
    }

    /// What the host does on its own initiative.
    package enum Action: Sendable, Hashable {
        /// Seal this control message under the session and send it to the session's address.
        case send(sessionID: UInt64, ControlMessage)
        /// Seal a counts answer (`0x43`) with the host's counters for this query id.
        case answerCounts(sessionID: UInt64, queryID: UInt32)
        /// Hand application data to the application.
        case deliver(sessionID: UInt64, type: UInt8, bytes: [UInt8])
        /// The session was committed (it is the device's live session now).
        case committed(sessionID: UInt64, keyID: KeyID)
        /// The key became active (persist it).
        case keyPromoted(KeyID)
        /// Forget the session's channel.
        case discard(sessionID: UInt64)
        /// Call `timerFired` at this monotonic instant.
        case scheduleTimer(at: UInt64)
    }

    struct Pending: Sendable {
        let keyID: KeyID
        let device: HostID
        let intent: HelloIntent
        let expiresAt: UInt64
    }

    struct Live: Sendable {
        let sessionID: UInt64
        let keyID: KeyID
        var lastReceivedAt: UInt64
        var lastSentAt: UInt64
    }

    /// The limits offered in every Accept.
    package let limits: SessionLimits
    /// The name sent in every Accept.
    package let hostName: String
    /// Most sessions (pending, live and draining) at once.
    package let capacity: Int
    private(set) var keys: [KeyID: Key] = [:]
    private var lastAcceptedTimestamp: [KeyID: UInt64] = [:]
    private var answers: [[UInt8]: (bytes: [UInt8], expiresAt: UInt64)] = [:]
    private(set) var pending: [UInt64: Pending] = [:]
    private(set) var live: [HostID: Live] = [:]
    private(set) var draining: [UInt64: UInt64] = [:]
    private var buckets: [UInt32: TokenBucket] = [:]
    private var sessionIDs: AttemptIDGenerator

    /// An empty table offering `limits`. `seed` makes session ids reproducible in tests.
    package init(
        keys: [Key], limits: SessionLimits = .standard, hostName: String = "aether", capacity: Int = 1_024,
        seed: UInt64? = nil
    ) {
        for key in keys { self.keys[key.keyID] = key }
        self.limits = limits
        self.hostName = hostName
        self.capacity = capacity
        sessionIDs = AttemptIDGenerator(seed: seed)
    }

    // MARK: Queries

    /// The session's key and whether it still opens records (pending, live or draining).
    package func keyID(ofSession sessionID: UInt64) -> KeyID? {
        if let entry = pending[sessionID] { return entry.keyID }
        if let entry = live.values.first(where: { $0.sessionID == sessionID }) { return entry.keyID }
        return nil
    }

    /// Whether the session opens records.
    package func opensRecords(_ sessionID: UInt64) -> Bool {
        pending[sessionID] != nil || draining[sessionID] != nil || live.values.contains { $0.sessionID == sessionID }
    }

    /// The key entry of an id.
    package func key(_ id: KeyID) -> Key? { keys[id] }

    /// The live session ids.
    package var liveSessions: [UInt64] { live.values.map(\.sessionID).sorted() }

    /// The slot status of a device: its active and pending keys, ascending.
    package func slots(for device: HostID) -> SlotStatus? {
        let entries = keys.values.filter { $0.device == device }.compactMap { key -> SlotStatus.Entry? in
            switch key.state {
            case .active: SlotStatus.Entry(keyID: key.keyID, state: .active)
            case .pending: SlotStatus.Entry(keyID: key.keyID, state: .pending)
            case .refused, .retired: nil
            }
        }.sorted { $0.keyID < $1.keyID }
        // At most 16 keys per device are paired; more are left out rather than failing the Accept.
        return try? SlotStatus(entries: Array(entries.prefix(SessionWire.maxSlots)))
    }

    /// The earliest instant at which `timerFired` has work.
    package var nextDeadline: UInt64? {
        var deadlines = answers.values.map(\.expiresAt) + pending.values.map(\.expiresAt) + Array(draining.values)
        for entry in live.values {
            deadlines.append(entry.lastReceivedAt + UInt64(limits.livenessTimeout))
            deadlines.append(entry.lastSentAt + UInt64(limits.livenessTimeout) / 4)
        }
        return deadlines.min()
    }

    // MARK: Keys

    /// Adds or replaces a key entry (pairing, retiring, refusing).
    package mutating func setKey(_ key: Key) { keys[key.keyID] = key }

    // MARK: Handshake

    /// A framed message 1 arrived from `source`.
    package mutating func message1Arrived(_ bytes: [UInt8], keyID: KeyID, source: UDPAddress, now: SessionTime)
        -> Message1Decision
    {
        guard admit(source, now: now.monotonic) else { return .drop }
        if let cached = answers[bytes], now.monotonic < cached.expiresAt { return .resend(cached.bytes) }
        guard keys[keyID] != nil else { return .drop }
        return .handshake
    }

    /// The hello of `keyID` authenticated: which payload to answer with. An Accept registers an
    /// uncommitted session under the Accept's session id.
    package mutating func helloAuthenticated(_ hello: Hello, now: SessionTime) -> Message2Payload? {
        guard let key = keys[hello.keyID] else { return nil }
        let hostTime = max(now.wall, 1)
        switch key.state {
        case .retired(let retiredAt):
            return (try? Tombstone(keyID: hello.keyID, retiredAt: max(retiredAt, 1))).map { .tombstone($0) }
        case .refused:
            return .pairAgain(PairAgain())
        case .active, .pending:
            break
        }
        if let last = lastAcceptedTimestamp[hello.keyID], hello.timestamp <= last {
            return (try? Stale(hostTime: hostTime)).map { .stale($0) }
        }
        if hello.timestamp < hostTime &- min(hostTime, SessionWire.helloMaxAgeMilliseconds) {
            return (try? Stale(hostTime: hostTime)).map { .stale($0) }
        }
        if hello.timestamp > hostTime + SessionWire.helloMaxSkewMilliseconds {
            return (try? TooNew(hostTime: hostTime)).map { .tooNew($0) }
        }
        let underKey = pending.values.filter { $0.keyID == hello.keyID }
        let total = pending.count + live.count + draining.count
        if total >= capacity || underKey.count >= Timing.maxPendingPerKey {
            let soonest = underKey.map(\.expiresAt).min() ?? (now.monotonic + Timing.answerCacheWindow)
            let wait = UInt32(clamping: min(soonest > now.monotonic ? soonest - now.monotonic : 0, 60_000))
            return (try? SessionBusy(retryAfterMilliseconds: wait)).map { .sessionBusy($0) }
        }
        var sessionID = sessionIDs.next().rawValue
        while opensRecords(sessionID) { sessionID = sessionIDs.next().rawValue }
        guard let slots = slots(for: key.device),
            let accept = try? Accept(
                sessionID: sessionID, hostTime: hostTime, livenessTimeoutMilliseconds: limits.livenessTimeout,
                maxSessionAgeSeconds: limits.maxSessionAge, maxCounter: limits.maxCounter,
                maxRecordPlaintext: limits.maxRecordPlaintext, slots: slots, hostName: hostName)
        else { return nil }
        lastAcceptedTimestamp[hello.keyID] = hello.timestamp
        pending[sessionID] = Pending(
            keyID: hello.keyID, device: key.device, intent: hello.intent,
            expiresAt: now.monotonic + Timing.pendingWindow)
        return .accept(accept)
    }

    /// The driver sealed `message2` for `message1`: identical message 1s get it again for 2 s.
    package mutating func answered(message1: [UInt8], message2: [UInt8], now: SessionTime) -> [Action] {
        answers[message1] = (message2, now.monotonic + Timing.answerCacheWindow)
        return finish([])
    }

    /// The driver could not seal the Accept for `sessionID`: forget the uncommitted session.
    package mutating func acceptFailed(_ sessionID: UInt64) { pending[sessionID] = nil }

    // MARK: Records

    /// A record opened under `sessionID` (AEAD verified, accepted by the window).
    package mutating func recordOpened(_ sessionID: UInt64, _ content: RecordContent, now: SessionTime) -> [Action] {
        var actions: [Action] = []
        if let entry = pending[sessionID] {
            // Unknown (or malformed) control types never prove a commit.
            guard content.provesCommit else { return finish([]) }
            pending[sessionID] = nil
            if let old = live[entry.device] {
                // Superseded without a BYE: the old session drains.
                draining[old.sessionID] = now.monotonic + Timing.drainWindow
            }
            live[entry.device] = Live(
                sessionID: sessionID, keyID: entry.keyID, lastReceivedAt: now.monotonic, lastSentAt: now.monotonic)
            actions.append(.committed(sessionID: sessionID, keyID: entry.keyID))
            if entry.intent == .promote, keys[entry.keyID]?.state == .pending {
                keys[entry.keyID]?.state = .active
                actions.append(.keyPromoted(entry.keyID))
            }
            if let slots = slots(for: entry.device) { actions.append(.send(sessionID: sessionID, .slotStatus(slots))) }
            actions += handleLive(entry.device, content, confirmAnswered: true, now: now)
            return finish(actions)
        }
        if let device = live.first(where: { $0.value.sessionID == sessionID })?.key {
            live[device]?.lastReceivedAt = now.monotonic
            return finish(handleLive(device, content, confirmAnswered: false, now: now))
        }
        if draining[sessionID] != nil {
            switch content {
            case .application(let type, let bytes):
                actions.append(.deliver(sessionID: sessionID, type: type, bytes: bytes))
            case .control(.bye):
                draining[sessionID] = nil
                actions.append(.discard(sessionID: sessionID))
            default: break
            }
        }
        return finish(actions)
    }

    /// The driver sealed a record under `sessionID`.
    package mutating func recordSealed(_ sessionID: UInt64, now: SessionTime) {
        guard let device = live.first(where: { $0.value.sessionID == sessionID })?.key else { return }
        live[device]?.lastSentAt = now.monotonic
    }

    /// Runs everything due at `now`.
    package mutating func timerFired(now: SessionTime) -> [Action] {
        let t = now.monotonic
        var actions: [Action] = []
        answers = answers.filter { t < $0.value.expiresAt }
        for (id, entry) in pending where t >= entry.expiresAt { actions.append(.discard(sessionID: id)) }
        pending = pending.filter { t < $0.value.expiresAt }
        for (id, until) in draining where t >= until { actions.append(.discard(sessionID: id)) }
        draining = draining.filter { t < $0.value }
        for (device, entry) in live {
            if t >= entry.lastReceivedAt + UInt64(limits.livenessTimeout) {
                live[device] = nil
                actions.append(.discard(sessionID: entry.sessionID))
            } else if t >= entry.lastSentAt + UInt64(limits.livenessTimeout) / 4 {
                live[device]?.lastSentAt = t
                actions.append(.send(sessionID: entry.sessionID, .keepAlive))
            }
        }
        return finish(actions.sorted { Self.order($0) < Self.order($1) })
    }

    // MARK: Internals

    private mutating func handleLive(
        _ device: HostID, _ content: RecordContent, confirmAnswered: Bool, now: SessionTime
    )
        -> [Action]
    {
        guard let entry = live[device] else { return [] }
        switch content {
        case .application(let type, let bytes):
            return [.deliver(sessionID: entry.sessionID, type: type, bytes: bytes)]
        case .control(.confirm):
            // A confirm after the commit: the slot status may have been lost, so it goes again.
            guard !confirmAnswered, let slots = slots(for: device) else { return [] }
            return [.send(sessionID: entry.sessionID, .slotStatus(slots))]
        case .control(.bye):
            live[device] = nil
            return [.discard(sessionID: entry.sessionID)]
        case .control(.countsQuery(let queryID)):
            return [.answerCounts(sessionID: entry.sessionID, queryID: queryID)]
        case .control, .unknownControl, .malformedControl:
            return []
        }
    }

    private mutating func admit(_ source: UDPAddress, now: UInt64) -> Bool {
        if buckets[source.ipv4] == nil, buckets.count >= Timing.maxSources {
            buckets = buckets.filter { !$0.value.isFull(now: now) }
            if buckets.count >= Timing.maxSources { return false }
        }
        var bucket =
            buckets[source.ipv4]
            ?? TokenBucket(capacity: Timing.message1Burst, perSecond: Timing.message1PerSecond, now: now)
        let admitted = bucket.take(now: now)
        buckets[source.ipv4] = bucket
        return admitted
    }

    private func finish(_ actions: [Action]) -> [Action] {
        guard let deadline = nextDeadline else { return actions }
        return actions + [.scheduleTimer(at: deadline)]
    }

    private static func order(_ action: Action) -> String {
        switch action {
        case .discard(let id): "d\(id)"
        case .send(let id, _): "s\(id)"
        default: "z"
        }
    }

}
