import AetherIO
import AetherSecurity
import AetherTransport
import Glibc
import Synchronization

/// `aether session pair|host|connect|retire|refuse`: the paired-device secure session over UDP.
///
/// Stores live under `--state-dir`, else `$XDG_STATE_HOME/aether`, else `~/.local/state/aether`: the
/// device's keys in `keys/` (one item per host id) and the host's in `host/keys/` (one item per host id it
/// serves; a host's keys form one device's slot status), with the host's tombstones in
/// `host/tombstones` (one `KEYID RETIRED_AT_MS` line each).
enum SessionCommand: CLICommand {
    static let name = "session"
    static let summary = "paired-device secure session over UDP (pair, host, connect)"
    static let usage = """
        usage: aether session pair --host-id ID [--state-dir DIR]
               aether session host [--port P] [--bind ADDR] [--echo] [--state-dir DIR]
                                   [--clock-skew-ms N] [--liveness-ms N]
               aether session connect HOST:PORT [--host-id ID] [--state-dir DIR] [--timeout-ms N] [--counts]
               aether session retire --key-id ID [--state-dir DIR]   (host: answer with a tombstone)
               aether session refuse --key-id ID [--state-dir DIR]   (host: answer with PairAgain)
        """

    static func run(_ arguments: [Word]) async throws -> Int32 {
        guard let sub = arguments.first?.text else { throw Arguments.UsageError(description: "missing subcommand") }
        let rest = Array(arguments.dropFirst())
        switch sub {
        case "pair": return try pair(rest)
        case "host": return try host(rest)
        case "connect": return try connect(rest)
        case "retire", "refuse": return try mark(rest, retire: sub == "retire")
        default: throw Arguments.UsageError(description: "unknown subcommand \(sub)")
        }
    }

    // MARK: pair

    static func pair(_ arguments: [Word]) throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["host-id", "state-dir"])
        guard let hostID = try parsed.value("host-id", expected: "a host id in hex", { try HostID(hex: $0) }) else {
            throw Arguments.UsageError(description: "--host-id is required")
        }
        let base = try stateDirectory(parsed)
        let manager = try deviceKeys(base)
        if let damaged = manager.unreadableHosts[hostID] {
            throw SessionCommandError("pairing refused: \(damaged.message)")
        }
        let result: KeyManager.PairingResult
        do {
            result = try manager.pair(hostID: hostID)
        } catch {
            throw SessionCommandError("pairing failed: \(error.message)")
        }
        guard case .paired(let key) = result else {
            throw SessionCommandError("pairing refused: this device already holds 16 keys; forget one first")
        }
        let hostStore = FileKeyStore(directory: base.appending("host/keys"))
        do {
            let existing = try hostStore.load(hostID: hostID)?.keys ?? []
            try hostStore.save(KeyStoreItem(hostID: hostID, keys: existing + [key]))
        } catch {
            let message = error.message
            do {
                try manager.pairingRefused(key.id)
            } catch {
                throw SessionCommandError(
                    "pairing refused by the host store: \(message); the new key \(key.id.hex) could not be removed "
                        + "from the device store either: \(error.message)")
            }
            throw SessionCommandError("pairing refused by the host store: \(message)")
        }
        StandardOutput.write("aether-session-pairing host=\(hostID.hex) key=\(key.id.hex) state=pending\n")
        return ExitStatus.success
    }

    /// The device's key manager over `base/keys`; a damaged retired-markers file is one clear line.
    static func deviceKeys(_ base: FilePath) throws -> KeyManager {
        do {
            return try KeyManager(store: FileKeyStore(directory: base.appending("keys")), clock: SystemClock())
        } catch {
            throw SessionCommandError("cannot read the device key store: \(error.message)")
        }
    }

    // MARK: host

    static func host(_ arguments: [Word]) throws -> Int32 {
        let parsed = try Arguments(
            arguments, options: ["port", "bind", "state-dir", "clock-skew-ms", "liveness-ms"], flags: ["echo"])
        let base = try stateDirectory(parsed)
        if let given = parsed.path("state-dir"), !isDirectory(given) {
            throw Arguments.UsageError(description: "--state-dir \(given) is not an existing directory")
        }
        let port = try parsed.integer("port", default: 47_300, in: 0...65_535)
        let liveness = try parsed.integer("liveness-ms", default: 15_000, in: 1_000...600_000)
        let skew = try signedInteger(parsed, "clock-skew-ms")
        let bind = try UDPAddress.parsing(
            (parsed.option("bind") ?? "127.0.0.1") + ":\(port)", option: "--bind", expected: "an IPv4 address")
        guard let state = try FileIdentity.current(base), state.isDirectory else {
            throw SessionCommandError(
                "the state directory \(base) does not exist; pair a device first (aether session pair) or give --state-dir"
            )
        }
        let keys = try hostKeys(base)
        let store = FileKeyStore(directory: base.appending("host/keys"))
        let socket = try UDPSocket(binding: bind)
        let echo = parsed.flag("echo")
        let holder = HostHolder()
        var limits = SessionLimits.standard
        limits.livenessTimeout = UInt32(liveness)
        let host = SessionHost(
            socket: socket, keys: keys.map(\.key), limits: limits, hostName: "aether",
            clock: SystemClock(wallSkew: .milliseconds(skew))
        ) { event in
            switch event {
            case .record(let sessionID, _, let type, let bytes):
                StandardOutput.write(bytes: bytes + [0x0A])
                if echo { try? holder.host?.send(sessionID: sessionID, type: type, bytes: bytes) }
            case .keyPromoted(let keyID):
                if let hostID = keys.first(where: { $0.key.entry.keyID == keyID })?.hostID {
                    promote(keyID, hostID: hostID, store: store)
                }
            case .committed(let sessionID, let keyID):
                StandardError.write("session \(String(sessionID, radix: 16)) committed under key \(keyID)\n")
            case .refused(let keyID, let payload):
                StandardError.write("answered \(refusalName(payload)) to key \(keyID)\n")
            case .discarded(let sessionID):
                StandardError.write("session \(String(sessionID, radix: 16)) ended\n")
            }
        }
        holder.set(host)
        StandardError.write("aether session host listening on \(socket.localAddress) with \(keys.count) key(s)\n")
        host.run()
        return ExitStatus.success
    }

    static func refusalName(_ payload: Message2Payload) -> String {
        switch payload {
        case .accept: "accept"
        case .stale: "stale"
        case .tooNew: "too-new"
        case .pairAgain: "pair-again"
        case .sessionBusy: "session-busy"
        case .tombstone: "tombstone"
        }
    }

    /// Every key of the host store, with the tombstone list applied. A tombstone list that cannot be read or
    /// is damaged stops the host (fails closed): otherwise a retired key would be accepted again.
    static func hostKeys(_ base: FilePath) throws -> [(key: SessionHost.HostKey, hostID: HostID)] {
        let tombstones: TombstoneList
        do {
            tombstones = try TombstoneFile(path: base.appending("host/tombstones")).load()
        } catch {
            throw SessionCommandError("the host refuses to start: \(error.message)")
        }
        let store = FileKeyStore(directory: base.appending("host/keys"))
        let report = try store.loadAll()
        for (hostID, damage) in report.damaged.sorted(by: { $0.key < $1.key }) {
            StandardError.write(
                "warning: host key store item \(store.path(for: hostID)) is damaged (\(damage)); its keys are not "
                    + "served; left as it is\n")
        }
        var keys: [(key: SessionHost.HostKey, hostID: HostID)] = []
        for item in report.items {
            for paired in item.keys {
                let state: SessionTableStateMachine.KeyState
                if let retiredAt = tombstones.retiredAt(paired.id) {
                    state = .retired(retiredAt: retiredAt)
                } else {
                    switch paired.state {
                    case .active: state = .active
                    case .pending: state = .pending
                    case .unlisted: state = .refused
                    }
                }
                let entry = SessionTableStateMachine.Key(keyID: paired.id, device: item.hostID, state: state)
                keys.append((SessionHost.HostKey(entry: entry, psk: paired.key), item.hostID))
            }
        }
        return keys
    }

    static func promote(_ keyID: KeyID, hostID: HostID, store: FileKeyStore) {
        do {
            guard let item = try store.load(hostID: hostID) else { return }
            var keys = item.keys
            for index in keys.indices where keys[index].id == keyID { keys[index].state = .active }
            try store.save(KeyStoreItem(hostID: hostID, keys: keys))
        } catch {
            StandardError.write("warning: could not save the promoted key \(keyID): \(error)\n")
        }
    }

    // MARK: retire / refuse

    static func mark(_ arguments: [Word], retire: Bool) throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["key-id", "state-dir"])
        guard let keyID = try parsed.value("key-id", expected: "a key id in hex", { try KeyID(hex: $0) }) else {
            throw Arguments.UsageError(description: "--key-id is required")
        }
        let base = try stateDirectory(parsed)
        let store = FileKeyStore(directory: base.appending("host/keys"))
        // Only the item that holds the key is touched; a damaged item of another host is reported, never
        // rewritten, and does not stop the others.
        var holder: KeyStoreItem?
        var damaged: [String] = []
        for hostID in try store.hostIDs() {
            switch try store.inspect(hostID: hostID) {
            case .absent: continue
            case .damaged(let damage):
                let path = store.path(for: hostID)
                damaged.append(path)
                StandardError.write(
                    "warning: host key store item \(path) is damaged (\(damage)); skipped, left as it is\n")
            case .intact(let item):
                if item.keys.contains(where: { $0.id == keyID }) { holder = item }
            }
        }
        if retire {
            // A tombstone needs only the key id: a key held by a damaged item can still be retired.
            guard holder != nil || !damaged.isEmpty else {
                throw SessionCommandError("unknown key \(keyID.hex): the host store does not hold it")
            }
            let file = TombstoneFile(path: base.appending("host/tombstones"))
            do {
                try file.record(keyID, retiredAt: SystemClock().keyTimestamp().millisecondsSinceEpoch)
            } catch {
                throw SessionCommandError("could not retire key \(keyID.hex): \(error.message)")
            }
            if holder == nil {
                StandardError.write(
                    "warning: key \(keyID.hex) is in no readable item; its tombstone is recorded for when the damaged "
                        + "item is repaired\n")
            }
        } else {
            guard let item = holder else {
                let reason =
                    damaged.isEmpty ? "" : " (it may be in a damaged item: \(damaged.joined(separator: ", ")))"
                throw SessionCommandError("unknown key \(keyID.hex): the host store does not hold it\(reason)")
            }
            var keys = item.keys
            for index in keys.indices where keys[index].id == keyID { keys[index].state = .unlisted }
            do {
                try store.save(KeyStoreItem(hostID: item.hostID, keys: keys))
            } catch {
                throw SessionCommandError("could not refuse key \(keyID.hex): \(error.message)")
            }
        }
        StandardOutput.write("\(retire ? "retired" : "refused") key \(keyID.hex)\n")
        return ExitStatus.success
    }

    // MARK: connect

    static func connect(_ arguments: [Word]) throws -> Int32 {
        let parsed = try Arguments(
            arguments, options: ["host-id", "state-dir", "timeout-ms"], flags: ["counts"], positionals: 1...1)
        guard parsed.positionals.count == 1 else { throw Arguments.UsageError(description: "expected HOST:PORT") }
        let address = try UDPAddress.parsing(parsed.positionals[0].text, option: "HOST:PORT", expected: "IPV4:PORT")
        let timeout = UInt64(try parsed.integer("timeout-ms", default: 10_000, in: 100...600_000))
        let base = try stateDirectory(parsed)
        let manager = try deviceKeys(base)
        let hostID: HostID
        if let given = try parsed.value("host-id", expected: "a host id in hex", { try HostID(hex: $0) }) {
            hostID = given
        } else {
            let hosts = manager.snapshot.hostIDs
            guard hosts.count == 1, let only = hosts.first else {
                if hosts.isEmpty, let damaged = manager.unreadableHosts.sorted(by: { $0.key < $1.key }).first {
                    throw SessionCommandError("cannot connect: \(damaged.value.message)")
                }
                throw SessionCommandError(
                    hosts.isEmpty
                        ? "unknown key: no paired host; run aether session pair"
                        : "several hosts paired; pass --host-id")
            }
            hostID = only
        }
        let order = manager.connectOrder(for: hostID)
        guard !order.isEmpty else {
            if let damaged = manager.unreadableHosts[hostID] {
                throw SessionCommandError("cannot connect: \(damaged.message)")
            }
            throw SessionCommandError("unknown key: no paired key for host \(hostID.hex)")
        }
        let socket = try UDPSocket(binding: UDPAddress(ipv4: address.ipv4 == 0x7f00_0001 ? 0x7f00_0001 : 0, port: 0))
        let status = ConnectStatus()
        let holder = ClientHolder()
        var psks: [KeyID: SymmetricKey] = [:]
        for paired in order { psks[paired.id] = paired.key }
        let known = Set(psks.keys)
        let client = SessionClient(socket: socket, host: address, keys: psks) { event in
            switch event {
            case .up:
                status.update {
                    $0.live = true
                    $0.sessions += 1
                }
            case .down: status.update { $0.live = false }
            case .record(_, let bytes):
                StandardOutput.write(bytes: bytes + [0x0A])
                status.update { $0.received += 1 }
            case .counts(let answer):
                StandardOutput.write(
                    "counts query=\(answer.queryID) sealed=\(answer.recordsSealed) opened=\(answer.recordsOpened) "
                        + "auth_failures=\(answer.authenticationFailures) replays=\(answer.replaysRejected) "
                        + "unknown_control=\(answer.unknownControl)\n")
                status.update { $0.countsReceived = true }
            case .slotStatus(let slots):
                let active = Set(slots.entries.filter { $0.state == .active }.map(\.keyID))
                let pending = Set(slots.entries.filter { $0.state == .pending }.map(\.keyID))
                let listing = manager.hostListed(hostID, pending: pending, active: active)
                if let failure = listing.saveFailure {
                    StandardError.write("warning: could not save the key states the host listed: \(failure.message)\n")
                }
                for case .reconnectNow(let keyID) in listing.actions where known.contains(keyID) {
                    // The key being connected is listed pending until its promote commits: nothing to do.
                    guard status.read({ $0.currentKey }) != keyID else { continue }
                    StandardError.write("the host lists key \(keyID.hex) as pending: reconnecting under it\n")
                    status.update { $0.currentKey = keyID }
                    guard let client = holder.client else { continue }
                    do throws(TransportError) {
                        try client.connect(keyID: keyID, pending: true)
                    } catch {
                        StandardError.write("warning: could not reconnect under key \(keyID.hex): \(error.message)\n")
                    }
                }
            case .tombstoned(let keyID, _):
                let retirement = manager.receivedTombstone(for: keyID, authenticated: true)
                status.update { $0.failure = tombstoneMessage(retirement) }
            case .suggestPairing(let keyID):
                status.update {
                    $0.failure =
                        "the host refused key \(keyID.hex) (PairAgain): pair again with aether session pair "
                        + "--host-id \(hostID.hex)"
                }
            case .gaveUp(_, let reason):
                status.update { state in
                    if state.failure == nil {
                        state.failure =
                            reason == .clockRejected
                            ? "the host rejected this clock twice (Stale/TooNew)" : "no usable key for the host"
                    }
                }
            case .cycleEnded(let keyID, let answered):
                for case .suggestPairingAgain(let host) in manager.connectCycleEnded(keyID, answered: answered) {
                    status.update { state in
                        if state.failure == nil {
                            state.failure =
                                "no answer to the pending key \(keyID.hex) in "
                                + "\(KeyRing.silentCyclesBeforePairingAgain) connect cycles: the host may not hold it; "
                                + "pair again with aether session pair --host-id \(host.hex)"
                        }
                    }
                }
            }
        }
        holder.set(client)
        try client.start()
        defer { client.stop() }
        // Keys in connect order (pending, active, unlisted; newest first): a key the host refuses or
        // retired gives way to the next one.
        var lastFailure: String?
        for (index, key) in order.enumerated() {
            status.update {
                $0.failure = nil
                $0.currentKey = key.id
            }
            try client.connect(keyID: key.id, pending: key.state == .pending)
            do {
                try waitForSession(status, timeout: timeout, address: address)
                lastFailure = nil
                StandardError.write("session up with \(address) under key \(key.id.hex)\n")
                break
            } catch let error as SessionCommandError where index + 1 < order.count && !error.isTimeout {
                StandardError.write("\(error.description); trying the next key\n")
                lastFailure = error.description
            }
        }
        if let lastFailure { throw SessionCommandError(lastFailure) }
        var sent = 0
        var lines = StandardInputLines(limit: SessionWire.maxRecordPlaintext)
        while let line = try lines.next() {
            try sendLine(line, client: client, status: status, timeout: timeout, address: address)
            sent += 1
        }
        // Let answers (echoes) arrive: until as many came back as went out, or 500 ms of quiet.
        var quietSince = SessionTime(reading: SystemClock()).monotonic
        var lastCount = status.read { $0.received }
        while status.read({ $0.received }) < sent {
            let now = SessionTime(reading: SystemClock()).monotonic
            let count = status.read { $0.received }
            if count != lastCount {
                lastCount = count
                quietSince = now
            }
            if now - quietSince >= 500 { break }
            usleep(5_000)
        }
        if parsed.flag("counts") {
            try client.queryCounts(id: 1)
            let start = SessionTime(reading: SystemClock()).monotonic
            while !status.read({ $0.countsReceived }) {
                guard SessionTime(reading: SystemClock()).monotonic - start < timeout else {
                    throw SessionCommandError("timed out: no counts answer from \(address)")
                }
                usleep(5_000)
            }
        }
        client.close()
        return ExitStatus.success
    }

    /// What `connect` says when the host proved it retired a key: whether the deletion (or the retired marker
    /// that keeps the key from being offered after a restart) reached the disk.
    static func tombstoneMessage(_ retirement: KeyManager.Retirement) -> String {
        let head = "the host retired key \(retirement.keyID.hex) (tombstone)"
        switch (retirement.itemFailure, retirement.markerFailure) {
        case (nil, _): return head + "; it was deleted here"
        case (let item?, nil):
            return head + "; it is recorded as retired here and never offered again, but its deletion could not be "
                + "saved: \(item.message)"
        case (let item?, let marker?):
            return head + "; it is not offered again in this run, but neither its deletion (\(item.message)) nor its "
                + "retired marker (\(marker.message)) could be saved: it would be offered again after a restart"
        }
    }

    /// Sends one line, waiting for a session again when the live one went down meanwhile.
    static func sendLine(
        _ line: [UInt8], client: SessionClient, status: ConnectStatus, timeout: UInt64, address: UDPAddress
    ) throws {
        for _ in 0..<3 {
            let result: Result<Void, TransportError>
            do throws(TransportError) {
                try client.send(type: 0, bytes: line)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            switch result {
            case .success: return
            case .failure(let error) where error.code == .notConnected:
                try waitForSession(status, timeout: timeout, address: address)
            case .failure(let error): throw error
            }
        }
        throw SessionCommandError("the session kept going down; gave up sending")
    }

    static func waitForSession(_ status: ConnectStatus, timeout: UInt64, address: UDPAddress) throws {
        let start = SessionTime(reading: SystemClock()).monotonic
        while true {
            let (live, failure) = status.read { ($0.live, $0.failure) }
            if let failure { throw SessionCommandError(failure) }
            if live { return }
            guard SessionTime(reading: SystemClock()).monotonic - start < timeout else {
                throw SessionCommandError("timed out: no session with \(address) within \(timeout) ms")
            }
            usleep(5_000)
        }
    }

    // MARK: helpers

    /// The state directory as bytes, from `argv` or the environment to the system calls (a name that is not
    /// UTF-8 is used as it is, never repaired).
    static func stateDirectory(_ parsed: Arguments) throws -> FilePath {
        if let dir = parsed.path("state-dir") { return dir }
        let slash = UInt8(ascii: "/")
        if let xdg = environment("XDG_STATE_HOME"), xdg.bytes.first == slash { return xdg.appending("aether") }
        guard let home = environment("HOME"), home.bytes.first == slash else {
            throw SessionCommandError("cannot find the state directory: set HOME, XDG_STATE_HOME or --state-dir")
        }
        return home.appending(".local/state/aether")
    }

    static func signedInteger(_ parsed: Arguments, _ name: String) throws -> Int64 {
        guard let text = parsed.option(name) else { return 0 }
        guard let value = Int64(text), abs(value) <= 86_400_000 else {
            throw Arguments.UsageError(description: "--\(name) must be an integer of milliseconds (at most a day)")
        }
        return value
    }

    /// An environment variable's bytes, as a path.
    static func environment(_ name: String) -> FilePath? {
        guard let value = unsafe getenv(name) else { return nil }
        let bytes = unsafe Array(UnsafeRawBufferPointer(start: value, count: strlen(value)))
        // A C string holds no NUL, so this cannot fail.
        return try? FilePath(bytes: bytes)
    }

    /// Whether `path` names an existing directory (following links, as `--state-dir` may be one).
    static func isDirectory(_ path: FilePath) -> Bool {
        guard let status = try? Syscall.stat(path) else { return false }
        return status.mode & UInt32(S_IFMT) == UInt32(S_IFDIR)
    }
}

extension UDPAddress {
    /// Parses a command-line address; a malformed one is a usage error (exit 2), not a failure.
    static func parsing(_ text: String, option: String, expected: String) throws(Arguments.UsageError) -> UDPAddress {
        do {
            return try UDPAddress(parsing: text)
        } catch {
            throw Arguments.UsageError(description: "\(option) must be \(expected), not \(text)")
        }
    }
}
