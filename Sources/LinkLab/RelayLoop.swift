import Synchronization

/// The relay: one thread between the client's and the server's TUN devices. It reads every packet each side
/// sends, passes it through that direction's `LinkDirectionState` (queue, rate, loss, delay), writes it to the
/// other side when the delay line releases it, and runs the path changes. It sleeps in poll(2) on the two devices,
/// a timerfd armed at the next due time and a wake pipe; it never starts a process or waits on a lock holder.
struct RelayLoop {
    /// The devices and the timer (the lab owns and closes them).
    struct Descriptors: Sendable {
        let client: Int32
        let server: Int32
        let timer: Int32
    }

    /// A path change in progress.
    private struct Cut {
        let kind: LinkLabPathChangeKind
        let until: Int64
    }

    /// SCHED_FIFO priority of the relay (1-99; above every normal thread, below the kernel's own).
    static let priority: Int32 = 20
    /// Client addresses a replacement hands out: 10.77.0.10 ... 10.77.0.249, in turn.
    static let addressPool: ClosedRange<UInt32> = 10...249

    private let descriptors: Descriptors
    private let shared: RelayShared
    private let pathChanges: LinkLabPathChanges?
    private var uplink: LinkDirectionState
    private var downlink: LinkDirectionState
    private var flows = TCPFlowTable()
    private var cut: Cut?
    private var nextScheduledChange: Int64?
    private var clientAddress: UInt32
    private var staleClientAddresses: Set<UInt32> = []
    private var nextAddress: UInt32 = addressPool.lowerBound
    private var pathChangeCount: Int64 = 0
    private var lateness: [Int64] = []
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    private var armedAt: Int64?
    private let startedAt: Int64
    private let cpuAtStart: Int64
    /// Why the relay stopped on its own (a device failed), if it did.
    private var failure: String?

    init(
        configuration: LinkLabConfiguration, descriptors: Descriptors, shared: RelayShared, clientAddress: UInt32,
        epoch: Int64
    ) {
        self.descriptors = descriptors
        self.shared = shared
        pathChanges = configuration.pathChanges
        uplink = LinkDirectionState(configuration.uplink, epoch: epoch, seed: configuration.seed)
        downlink = LinkDirectionState(
            configuration.downlink, epoch: epoch, seed: configuration.seed ^ 0x5DEE_CE66_D1CE_4E5B)
        self.clientAddress = clientAddress
        nextScheduledChange = configuration.pathChanges.map { epoch + RateSchedule.nanoseconds($0.first) }
        startedAt = RelayThread.now()
        cpuAtStart = RelayThread.cpuNanoseconds()
    }

    /// Runs until the lab asks it to stop.
    mutating func run() {
        let realTime = RelayThread.raisePriority(Self.priority)
        shared.state.withLock { $0.counters.realTimePriority = realTime }
        let waitOn = [descriptors.client, descriptors.server, descriptors.timer, shared.relayWake.read]
        while failure == nil {
            guard applyCommands(at: RelayThread.now()) else { break }
            step(at: RelayThread.now())
            publish()
            guard let next = nextEvent else {
                arm(nil)
                wait(on: waitOn)
                continue
            }
            if next <= RelayThread.now() { continue }
            arm(next)
            wait(on: waitOn)
        }
        arm(nil)
        publish()
        if let failure {
            // A device that fails stays readable in poll(2): going on would spin at a real-time priority.
            shared.state.withLock { $0.lastError = failure }
        }
    }

    // MARK: - One round

    /// Everything due by `now`: the end or start of a path change, departures, releases.
    private mutating func step(at now: Int64) {
        if let current = cut, now >= current.until { cut = nil }
        if let scheduled = nextScheduledChange, now >= scheduled, let pathChanges {
            beginPathChange(pathChanges.kind, window: RateSchedule.nanoseconds(pathChanges.window), at: now)
            let period = RateSchedule.nanoseconds(pathChanges.period)
            var next = scheduled + period
            while next <= now { next += period }
            nextScheduledChange = next
        }
        uplink.advance(to: now)
        downlink.advance(to: now)
        let releaseTime = RelayThread.now()
        while let packet = uplink.release(by: releaseTime) { deliver(packet, toClient: false, at: releaseTime) }
        while let packet = downlink.release(by: releaseTime) { deliver(packet, toClient: true, at: releaseTime) }
    }

    private var nextEvent: Int64? {
        [uplink.nextEvent, downlink.nextEvent, cut?.until, nextScheduledChange].compactMap { $0 }.min()
    }

    private mutating func wait(on descriptors: [Int32]) {
        let ready = RelayTimer.wait(descriptors, timeout: -1)
        if ready[2] { RelayTimer.drain(self.descriptors.timer) }
        if ready[3] { RelayTimer.drain(shared.relayWake.read) }
        if ready[0] { receive(fromClient: true) }
        if ready[1] { receive(fromClient: false) }
    }

    private mutating func arm(_ time: Int64?) {
        guard time != armedAt else { return }
        RelayTimer.arm(descriptors.timer, at: time)
        armedAt = time
    }

    /// Applies the lab's commands; false when it asked the relay to stop.
    private mutating func applyCommands(at now: Int64) -> Bool {
        let (stop, restart, manual) = shared.state.withLock { state in
            let taken = (state.stop, state.restartAt, state.manualChanges)
            state.restartAt = nil
            state.manualChanges = []
            return taken
        }
        if stop { return false }
        if let restart {
            uplink.advance(to: now)
            downlink.advance(to: now)
            uplink.restartClock(at: restart)
            downlink.restartClock(at: restart)
            nextScheduledChange = pathChanges.map { restart + RateSchedule.nanoseconds($0.first) }
        }
        for change in manual { beginPathChange(change.kind, window: change.window, at: now) }
        return true
    }

    // MARK: - Packets

    /// Reads what one side sent (a bounded batch, so the other side and the timer are not starved).
    private mutating func receive(fromClient: Bool) {
        let descriptor = fromClient ? descriptors.client : descriptors.server
        for _ in 0..<64 {
            switch TunDevice.read(descriptor, into: &buffer) {
            case .packet(let count):
                accept(Array(buffer[0..<count]), fromClient: fromClient, at: RelayThread.now())
            case .empty:
                return
            case .failed(let code):
                failure =
                    "the relay stopped: reading the \(fromClient ? "client" : "server")'s TUN device failed: "
                    + TunDevice.reason(code)
                return
            }
        }
    }

    private mutating func accept(_ bytes: [UInt8], fromClient: Bool, at now: Int64) {
        guard let packet = IPv4Packet(bytes) else {
            update(towardServer: fromClient) {
                $0.counters.offered.add(bytes.count)
                $0.counters.droppedOther.add(bytes.count)
            }
            return
        }
        let stale =
            fromClient
            ? staleClientAddresses.contains(packet.source) : staleClientAddresses.contains(packet.destination)
        if stale || cut != nil {
            update(towardServer: fromClient) {
                $0.counters.offered.add(bytes.count)
                $0.counters.droppedPath.add(bytes.count)
            }
            // During a reset window every TCP segment is answered with a reset, so its sender's end dies at once.
            if !stale, cut?.kind == .resetConnections, let answer = TCPFlowTable.answer(to: packet) {
                inject(answer, toClient: fromClient)
            }
            return
        }
        flows.sent(packet, fromClient: fromClient, at: now)
        update(towardServer: fromClient) {
            $0.advance(to: now)
            $0.offer(bytes, at: now)
        }
    }

    private mutating func deliver(_ packet: LabPacket, toClient: Bool, at now: Int64) {
        let written = TunDevice.write(toClient ? descriptors.client : descriptors.server, packet.bytes)
        let parsed = IPv4Packet(packet.bytes)
        update(towardServer: !toClient) {
            if written {
                $0.counters.delivered.add(packet.bytes.count)
                $0.counters.deliveredTCPPayloadBytes += Int64(parsed?.tcp?.payloadLength ?? 0)
            } else {
                $0.counters.droppedOther.add(packet.bytes.count)
            }
        }
        guard written else { return }
        lateness.append(now - packet.time)
        if let parsed { flows.delivered(parsed, toClient: toClient) }
    }

    private mutating func inject(_ reset: [UInt8], toClient: Bool) {
        guard TunDevice.write(toClient ? descriptors.client : descriptors.server, reset) else { return }
        update(towardServer: !toClient) { $0.counters.resetsInjected += 1 }
    }

    private mutating func update(towardServer: Bool, _ change: (inout LinkDirectionState) -> Void) {
        if towardServer { change(&uplink) } else { change(&downlink) }
    }

    // MARK: - Path changes

    private mutating func beginPathChange(_ kind: LinkLabPathChangeKind, window: Int64, at now: Int64) {
        pathChangeCount += 1
        uplink.flush()
        downlink.flush()
        for reset in flows.resets(towardClient: true) { inject(reset, toClient: true) }
        switch kind {
        case .resetConnections:
            for reset in flows.resets(towardClient: false) { inject(reset, toClient: false) }
        case .replaceClientAddress:
            let old = clientAddress
            let new = (old & 0xFFFF_FF00) | nextAddress
            nextAddress = nextAddress == Self.addressPool.upperBound ? Self.addressPool.lowerBound : nextAddress + 1
            staleClientAddresses.insert(old)
            staleClientAddresses.remove(new)
            clientAddress = new
            shared.state.withLock { $0.addressJobs.append(.init(old: old, new: new)) }
            shared.wakeAddressThread()
        }
        flows.removeAll()
        cut = Cut(kind: kind, until: now + window)
    }

    // MARK: - Counters

    private mutating func publish() {
        let samples = lateness
        lateness.removeAll(keepingCapacity: true)
        let up = uplink.counters
        let down = downlink.counters
        let changes = pathChangeCount
        let cpu = Double(RelayThread.cpuNanoseconds() - cpuAtStart) / 1e9
        let alive = Double(RelayThread.now() - startedAt) / 1e9
        shared.state.withLock { state in
            state.counters.uplink = up
            state.counters.downlink = down
            state.counters.pathChanges = changes
            state.counters.relayCPUSeconds = cpu
            state.counters.relaySeconds = alive
            for sample in samples { state.counters.lateness.record(nanoseconds: sample) }
        }
    }
}
