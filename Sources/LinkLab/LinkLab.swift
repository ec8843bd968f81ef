import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A link with a real round-trip time between two network namespaces (root only): a user-space delay line between
/// a TUN device in each (the relay thread of this process), modelled on mahimahi's mm-delay, mm-link and mm-loss.
/// Per direction a drop-tail queue, a fluid rate server (constant or a trace, with outages), i.i.d. loss and a fixed
/// one-way delay; path changes that reset every connection or replace the client's address; the client
/// namespace's default congestion control chosen per lab. Clients run in `clientNamespace` against `serverAddress`,
/// servers in `serverNamespace` (`start`, `run`, `withNamespace`).
///
/// Names carry the pid (`aether-lab-PID-N-client`), so `sweepStaleLabs()` (run by every new lab) removes what a
/// crashed process left; the TUN devices go with the descriptors, so a crash leaves only the two namespaces.
/// See docs/LINK-LAB.md.
public final class LinkLab: Sendable {
    /// What the lab emulates.
    public let configuration: LinkLabConfiguration
    /// The client's network namespace (`ip netns exec NAME ...`).
    public let clientNamespace: String
    /// The server's network namespace.
    public let serverNamespace: String
    /// The TUN device in the client's namespace.
    public let clientDevice: String
    /// The TUN device in the server's namespace.
    public let serverDevice: String
    /// The server's address (IPv4), where the server namespace's servers listen.
    public let serverAddress: String

    /// The first client address; later ones come from `RelayLoop.addressPool` in the same /24.
    static let firstClientAddress = "10.77.0.1"
    static let firstServerAddress = "10.77.0.2"
    static let prefix = "aether-lab-"

    private static let sequence = Atomic<Int>(0)

    private let descriptors: RelayLoop.Descriptors
    private let shared: RelayShared
    private let lab: Mutex<LabState>

    private struct LabState: Sendable {
        var tornDown = false
        var children: [LinkLabProcess] = []
        var threadsStarted = false
    }

    /// Monotonic seconds (the clock of `LinkLabProcess` deadlines).
    public static func seconds() -> Double { Double(RelayThread.now()) / 1e9 }

    /// Builds the lab: removes stale labs, makes the namespaces and devices, sets the congestion control, starts
    /// the relay. Throws `.unavailable` without root or tools, `.invalidConfiguration`, or `.setupFailed` (after
    /// removing whatever it had made).
    public init(_ configuration: LinkLabConfiguration) throws(LinkLabError) {
        if let reason = Self.unavailableReason() { throw LinkLabError(.unavailable, reason) }
        try configuration.validate()
        self.configuration = configuration
        Self.sweepStaleLabs()
        let number = Self.sequence.wrappingAdd(1, ordering: .relaxed).oldValue % 10_000
        let pid = getpid()
        let name = "\(Self.prefix)\(pid)-\(number)"
        clientNamespace = name + "-client"
        serverNamespace = name + "-server"
        clientDevice = "al\(pid)c\(number)"
        serverDevice = "al\(pid)s\(number)"
        serverAddress = Self.firstServerAddress
        guard let client = IPv4Packet.address(Self.firstClientAddress) else {
            throw LinkLabError(.setupFailed, "bad built-in address")
        }
        shared = try RelayShared(clientAddress: client)
        lab = Mutex(LabState())
        var opened: [Int32] = []
        do {
            try Self.allowCongestionControl(configuration.clientCongestionControl)
            try LabCommand.run([LabCommand.ip, "netns", "add", clientNamespace])
            try LabCommand.run([LabCommand.ip, "netns", "add", serverNamespace])
            // IPv6 off before the devices come up (no router solicitations on the link); no cached metrics.
            let common = [
                "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1",
                "net.ipv4.tcp_no_metrics_save=1",
            ]
            try Self.sysctl(
                clientNamespace,
                common + ["net.ipv4.tcp_congestion_control=\(configuration.clientCongestionControl.rawValue)"])
            try Self.sysctl(serverNamespace, common)
            let clientDevice = clientDevice
            let serverDevice = serverDevice
            let clientFD = try NamespaceThread.run(in: "/run/netns/" + clientNamespace) {
                try TunDevice.open(name: clientDevice)
            }
            opened.append(clientFD)
            let serverFD = try NamespaceThread.run(in: "/run/netns/" + serverNamespace) {
                try TunDevice.open(name: serverDevice)
            }
            opened.append(serverFD)
            let timer = try RelayTimer.make()
            opened.append(timer)
            descriptors = RelayLoop.Descriptors(client: clientFD, server: serverFD, timer: timer)
            for (namespace, device, address) in [
                (clientNamespace, clientDevice, Self.firstClientAddress),
                (serverNamespace, serverDevice, Self.firstServerAddress),
            ] {
                let batch = """
                    link set lo up
                    link set \(device) mtu 1500 txqueuelen 1000 up
                    address add \(address)/24 dev \(device)

                    """
                try LabCommand.run([LabCommand.ip, "-n", namespace, "-batch", "-"], input: batch)
            }
        } catch {
            for descriptor in opened { RelayTimer.close(descriptor) }
            shared.closePipes()
            Self.removeNamespaces([clientNamespace, serverNamespace])
            let labError = error as? LinkLabError
            if let labError, labError.code == .unavailable { throw labError }
            throw LinkLabError(.setupFailed, "building the lab failed: \(labError?.message ?? "\(error)")")
        }
        startThreads(clientAddress: client)
    }

    deinit { tearDown() }

    private func startThreads(clientAddress: UInt32) {
        let configuration = configuration
        let descriptors = descriptors
        let shared = shared
        let epoch = RelayThread.now()
        let relay = Thread {
            var loop = RelayLoop(
                configuration: configuration, descriptors: descriptors, shared: shared, clientAddress: clientAddress,
                epoch: epoch)
            loop.run()
            shared.relayEnded.signal()
        }
        relay.name = "aether-lab-relay"
        relay.stackSize = 1 << 20
        relay.start()
        let clientNamespace = clientNamespace
        let clientDevice = clientDevice
        let addresses = Thread {
            Self.replaceAddresses(shared: shared, namespace: clientNamespace, device: clientDevice)
            shared.addressEnded.signal()
        }
        addresses.name = "aether-lab-addresses"
        addresses.start()
        lab.withLock { $0.threadsStarted = true }
    }

    /// The address thread: runs each replacement the relay asks for with `ip`, until the lab stops.
    private static func replaceAddresses(shared: RelayShared, namespace: String, device: String) {
        while true {
            _ = RelayTimer.wait([shared.addressWake.read], timeout: -1)
            RelayTimer.drain(shared.addressWake.read)
            let (stop, jobs) = shared.state.withLock { state in
                let taken = (state.stop, state.addressJobs)
                state.addressJobs = []
                return taken
            }
            if stop { return }
            for job in jobs {
                // The old one first: deleting a primary address deletes the secondaries of its subnet with it.
                let batch = """
                    address del \(IPv4Packet.text(job.old))/24 dev \(device)
                    address add \(IPv4Packet.text(job.new))/24 dev \(device)

                    """
                do {
                    try LabCommand.run([LabCommand.ip, "-n", namespace, "-batch", "-"], input: batch)
                    shared.state.withLock {
                        $0.clientAddress = job.new
                        $0.addressChanges += 1
                    }
                } catch {
                    shared.state.withLock { $0.lastError = error.message }
                }
            }
        }
    }

    // MARK: - Using the lab

    /// The client's current address (it changes with each `.replaceClientAddress` path change).
    public var clientAddress: String { IPv4Packet.text(shared.state.withLock { $0.clientAddress }) }

    /// Address replacements done so far.
    public var addressChanges: Int64 { shared.state.withLock { $0.addressChanges } }

    /// The last failure of an address replacement, or why the relay stopped (a TUN device failed), if either
    /// happened.
    public var lastError: String? { shared.state.withLock { $0.lastError } }

    /// What the relay has counted since the lab started.
    public func counters() -> LinkLabCounters { shared.state.withLock { $0.counters } }

    /// Makes now the time zero of the rate traces, the outages and the path-change schedule (say, at the start of
    /// an upload); the lab's own start is the first zero.
    public func restartClock() {
        let now = RelayThread.now()
        shared.state.withLock { $0.restartAt = now }
        shared.wakeRelay()
    }

    /// Begins a path change of `kind` now, cutting the path for `window` seconds (outside any schedule).
    public func changePath(_ kind: LinkLabPathChangeKind, window: Double) {
        let length = RateSchedule.nanoseconds(max(window, 0.001))
        shared.state.withLock { $0.manualChanges.append((kind, length)) }
        shared.wakeRelay()
    }

    /// The namespace of `side`.
    public func namespace(_ side: LinkLabSide) -> String {
        side == .client ? clientNamespace : serverNamespace
    }

    /// `arguments` prefixed to run in `side`'s namespace (`ip netns exec NAME`), for callers with their own
    /// process handling.
    public func command(_ arguments: [String], in side: LinkLabSide) -> [String] {
        [LabCommand.ip, "netns", "exec", namespace(side)] + arguments
    }

    /// Starts `arguments` (the first is the executable's path) in `side`'s namespace; logs go to `logs`.out/.err.
    /// The lab stops it when it is torn down, if it still runs.
    public func start(
        _ arguments: [String], in side: LinkLabSide, environment: [String: String] = [:], logs: String
    ) throws(LinkLabError) -> LinkLabProcess {
        let child = try LinkLabProcess(arguments, namespace: namespace(side), environment: environment, logs: logs)
        let tornDown = lab.withLock { state in
            if !state.tornDown { state.children.append(child) }
            return state.tornDown
        }
        if tornDown {
            child.stop()
            throw LinkLabError(.commandFailed, "the lab is torn down")
        }
        return child
    }

    /// Runs `arguments` in `side`'s namespace (the client's, against `serverAddress`) to its exit or `timeout`
    /// seconds: its wall time, exit and output, and the lab's counters over the run. With `restartingClock` the
    /// traces, outages and path changes start from the command's start.
    public func run(
        _ arguments: [String], in side: LinkLabSide = .client, timeout: Double, environment: [String: String] = [:],
        logs: String, restartingClock: Bool = false
    ) async throws(LinkLabError) -> LinkLabRun {
        if restartingClock { restartClock() }
        let before = counters()
        let child = try start(arguments, in: side, environment: environment, logs: logs)
        let (status, stopped) = await child.waitForExit(deadline: child.started + timeout)
        let seconds = stopped ? timeout : Self.seconds() - child.started
        return LinkLabRun(
            seconds: seconds, status: status, stopped: stopped, output: child.output, errorTail: child.errorTail,
            counters: counters().since(before))
    }

    /// Runs `body` on a thread inside `side`'s namespace (sockets it makes belong there) and returns its result.
    public func withNamespace<T: Sendable>(_ side: LinkLabSide, _ body: @escaping @Sendable () throws -> T) throws -> T
    {
        try NamespaceThread.run(in: "/run/netns/" + namespace(side), body)
    }

    /// Waits until a TCP socket listens on `port` in `side`'s namespace; `.timedOut` after `timeout` seconds.
    public func waitForListener(port: Int, in side: LinkLabSide = .server, timeout: Double) async throws(LinkLabError) {
        let deadline = Self.seconds() + timeout
        while Self.seconds() < deadline {
            let listing = try? withNamespace(side) { try LabCommand.read("/proc/thread-self/net/tcp") }
            if let listing, LabCommand.listeningPorts(procNetTCP: listing).contains(port) { return }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        throw LinkLabError(.timedOut, "nothing listened on port \(port) in \(namespace(side)) within \(timeout) s")
    }

    /// Makes `control` the client namespace's default congestion control (for the connections opened after).
    public func setClientCongestionControl(_ control: LinkLabCongestionControl) throws(LinkLabError) {
        try Self.allowCongestionControl(control)
        try Self.sysctl(clientNamespace, ["net.ipv4.tcp_congestion_control=\(control.rawValue)"])
    }

    /// Sets `key=value` sysctls in `side`'s namespace: a TCP setting to measure a line against, such as
    /// `net.ipv4.tcp_slow_start_after_idle=0`.
    public func setSysctl(_ settings: [String], in side: LinkLabSide) throws(LinkLabError) {
        try Self.sysctl(namespace(side), settings)
    }

    /// A sysctl value as `side`'s namespace sees it (`net.ipv4.tcp_congestion_control`).
    public func sysctlValue(_ key: String, in side: LinkLabSide) throws(LinkLabError) -> String {
        try LabCommand.run([LabCommand.ip, "netns", "exec", namespace(side), LabCommand.sysctl, "-n", key])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the children, the relay and the address thread, closes the devices and deletes the namespaces.
    /// Safe to call more than once; `deinit` calls it too.
    public func tearDown() {
        let (first, children, started) = lab.withLock { state in
            let taken = (!state.tornDown, state.children, state.threadsStarted)
            state.tornDown = true
            state.children = []
            return taken
        }
        guard first else { return }
        for child in children { child.stop() }
        if started {
            shared.state.withLock { $0.stop = true }
            shared.wakeRelay()
            shared.wakeAddressThread()
            // Both wake at once from poll; the bound only guards against a thread that never got to run.
            _ = shared.relayEnded.wait(timeout: .now() + 5)
            _ = shared.addressEnded.wait(timeout: .now() + 5)
        }
        for descriptor in [descriptors.client, descriptors.server, descriptors.timer] { RelayTimer.close(descriptor) }
        shared.closePipes()
        Self.removeNamespaces([clientNamespace, serverNamespace])
    }

    // MARK: - The host

    /// Why this process cannot build a lab (nil when it can): root, `ip`, `sysctl` and /dev/net/tun are needed.
    public static func unavailableReason() -> String? {
        guard getuid() == 0 else { return "needs root (network namespaces, TUN devices)" }
        for tool in [LabCommand.ip, LabCommand.sysctl] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (Debian: iproute2, procps)"
        }
        guard FileManager.default.fileExists(atPath: "/dev/net/tun") else { return "/dev/net/tun is missing" }
        return nil
    }

    /// Deletes the namespaces of labs whose process is gone (a crashed test or bench), killing what still runs in
    /// them; returns the names removed.
    @discardableResult
    public static func sweepStaleLabs() -> [String] {
        guard let listing = try? LabCommand.run([LabCommand.ip, "netns", "list"]) else { return [] }
        let stale = staleNamespaces(listing: listing) { pid in pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH }
        removeNamespaces(stale)
        return stale
    }

    /// The lab namespaces in an `ip netns list` listing whose owner pid `isDead`.
    static func staleNamespaces(listing: String, isDead: (Int32) -> Bool) -> [String] {
        var names: [String] = []
        for line in listing.split(separator: "\n") {
            guard let name = line.split(separator: " ").first, name.hasPrefix(prefix) else { continue }
            let rest = name.dropFirst(prefix.count)
            guard let pidText = rest.split(separator: "-").first, let pid = Int32(pidText), isDead(pid) else {
                continue
            }
            names.append(String(name))
        }
        return names
    }

    /// Kills what runs in each namespace, then deletes it (errors ignored: it may be gone already).
    static func removeNamespaces(_ names: [String]) {
        for name in names {
            if let pids = try? LabCommand.run([LabCommand.ip, "netns", "pids", name]) {
                for pid in pids.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
            }
            _ = try? LabCommand.run([LabCommand.ip, "netns", "delete", name])
        }
    }

    /// Sets sysctls in a namespace.
    private static func sysctl(_ namespace: String, _ settings: [String]) throws(LinkLabError) {
        try LabCommand.run([LabCommand.ip, "netns", "exec", namespace, LabCommand.sysctl, "-q", "-w"] + settings)
    }

    /// Adds `control` to the host's `net.ipv4.tcp_allowed_congestion_control` when it is missing (a namespace may
    /// only default to an allowed one). This changes the host, once; it never removes anything from the list.
    static func allowCongestionControl(_ control: LinkLabCongestionControl) throws(LinkLabError) {
        let allowedPath = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
        let allowed = try LabCommand.read(allowedPath).split(separator: " ").map(String.init)
        guard !allowed.contains(control.rawValue) else { return }
        let available = try LabCommand.read("/proc/sys/net/ipv4/tcp_available_congestion_control")
        guard available.split(separator: " ").contains(Substring(control.rawValue)) else {
            // Loading the module makes it available (the kernel may have it as tcp_<name>.ko).
            _ = try? LabCommand.run(["/usr/sbin/modprobe", "tcp_" + control.rawValue])
            let again = try LabCommand.read("/proc/sys/net/ipv4/tcp_available_congestion_control")
            guard again.split(separator: " ").contains(Substring(control.rawValue)) else {
                throw LinkLabError(.unavailable, "this kernel has no \(control.rawValue) congestion control")
            }
            return try allowCongestionControl(control)
        }
        try LabCommand.write(allowedPath, (allowed + [control.rawValue]).joined(separator: " "))
    }
}
