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

    static func run(_ arguments: [String]) async throws -> Int32 {
        guard let sub = arguments.first else { throw Arguments.UsageError(description: "missing subcommand") }
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

    static func pair(_ arguments: [String]) throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["host-id", "state-dir"])
        guard let hex = parsed.option("host-id") else {
            throw Arguments.UsageError(description: "--host-id is required")
        }
        let hostID = try HostID(hex: hex)
        let base = try stateDirectory(parsed)
        let manager = try KeyManager(store: FileKeyStore(directory: base + "/keys"), clock: SystemClock())
        guard case .paired(let key) = try manager.pair(hostID: hostID) else {
            throw SessionCommandError("pairing refused: this device already holds 16 keys; forget one first")
        }
        let hostStore = FileKeyStore(directory: base + "/host/keys")
        do {
            let existing = try hostStore.load(hostID: hostID)?.keys ?? []
            try hostStore.save(KeyStoreItem(hostID: hostID, keys: existing + [key]))
        } catch {
            try? manager.pairingRefused(key.id)
            throw SessionCommandError("pairing refused by the host store: \(error.message)")
        }
        StandardOutput.write("aether-session-pairing host=\(hostID.hex) key=\(key.id.hex) state=pending\n")
        return ExitStatus.success
    }

    // MARK: host

    static func host(_ arguments: [String]) throws -> Int32 {
        let parsed = try Arguments(
            arguments, options: ["port", "bind", "state-dir", "clock-skew-ms", "liveness-ms"], flags: ["echo"])
        let base = try stateDirectory(parsed)
        let port = try parsed.integer("port", default: 47_300, in: 0...65_535)
        let liveness = try parsed.integer("liveness-ms", default: 15_000, in: 1_000...600_000)
        let skew = try signedInteger(parsed, "clock-skew-ms")
        let bind = try UDPAddress(parsing: (parsed.option("bind") ?? "127.0.0.1") + ":\(port)")
        let keys = try hostKeys(base)
        let store = FileKeyStore(directory: base + "/host/keys")
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
                StandardOutput.write(String(decoding: bytes, as: UTF8.self) + "\n")
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

    /// Every key of the host store, with the tombstones file applied.
    static func hostKeys(_ base: String) throws -> [(key: SessionHost.HostKey, hostID: HostID)] {
        let report = try FileKeyStore(directory: base + "/host/keys").loadAll()
        for (hostID, damage) in report.damaged {
            StandardError.write("warning: host key store item \(hostID) is damaged (\(damage)); skipped\n")
        }
        let tombstones = readTombstones(base)
        var keys: [(key: SessionHost.HostKey, hostID: HostID)] = []
        for item in report.items {
            for paired in item.keys {
                let state: SessionTableStateMachine.KeyState
                if let retiredAt = tombstones[paired.id] {
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

    static func mark(_ arguments: [String], retire: Bool) throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["key-id", "state-dir"])
        guard let hex = parsed.option("key-id") else { throw Arguments.UsageError(description: "--key-id is required") }
        let keyID = try KeyID(hex: hex)
        let base = try stateDirectory(parsed)
        let store = FileKeyStore(directory: base + "/host/keys")
        for hostID in try store.hostIDs() {
            guard let item = try store.load(hostID: hostID), item.keys.contains(where: { $0.id == keyID }) else {
                continue
            }
            if retire {
                let line = "\(keyID.hex) \(SystemClock().keyTimestamp().millisecondsSinceEpoch)\n"
                try appendLine(base + "/host/tombstones", line)
            } else {
                var keys = item.keys
                for index in keys.indices where keys[index].id == keyID { keys[index].state = .unlisted }
                try store.save(KeyStoreItem(hostID: hostID, keys: keys))
            }
            StandardOutput.write("\(retire ? "retired" : "refused") key \(keyID.hex)\n")
            return ExitStatus.success
        }
        throw SessionCommandError("unknown key \(keyID.hex): the host store does not hold it")
    }

    // MARK: connect

    static func connect(_ arguments: [String]) throws -> Int32 {
        let parsed = try Arguments(
            arguments, options: ["host-id", "state-dir", "timeout-ms"], flags: ["counts"])
        guard parsed.positionals.count == 1 else { throw Arguments.UsageError(description: "expected HOST:PORT") }
        let address = try UDPAddress(parsing: parsed.positionals[0])
        let timeout = UInt64(try parsed.integer("timeout-ms", default: 10_000, in: 100...600_000))
        let base = try stateDirectory(parsed)
        let manager = try KeyManager(store: FileKeyStore(directory: base + "/keys"), clock: SystemClock())
        let hostID: HostID
        if let hex = parsed.option("host-id") {
            hostID = try HostID(hex: hex)
        } else {
            let hosts = manager.snapshot.hostIDs
            guard hosts.count == 1, let only = hosts.first else {
                throw SessionCommandError(
                    hosts.isEmpty
                        ? "unknown key: no paired host; run aether session pair"
                        : "several hosts paired; pass --host-id")
            }
            hostID = only
        }
        let order = manager.connectOrder(for: hostID)
        guard !order.isEmpty else {
            throw SessionCommandError("unknown key: no paired key for host \(hostID.hex)")
        }
        let socket = try UDPSocket(binding: UDPAddress(ipv4: address.ipv4 == 0x7f00_0001 ? 0x7f00_0001 : 0, port: 0))
        let status = ConnectStatus()
        var psks: [KeyID: SymmetricKey] = [:]
        for paired in order { psks[paired.id] = paired.key }
        let client = SessionClient(socket: socket, host: address, keys: psks) { event in
            switch event {
            case .up(let info):
                status.update {
                    $0.live = true; $0.sessions += 1; _ = info
                }
            case .down: status.update { $0.live = false }
            case .record(_, let bytes):
                StandardOutput.write(String(decoding: bytes, as: UTF8.self) + "\n")
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
                _ = try? manager.hostListed(hostID, pending: pending, active: active)
            case .tombstoned(let keyID, _):
                try? manager.receivedTombstone(for: keyID, authenticated: true)
                status.update { $0.failure = "the host retired key \(keyID.hex) (tombstone); it was deleted here" }
            case .suggestPairing(let keyID):
                status.update { $0.failure = "the host refused key \(keyID.hex): pair again" }
            case .gaveUp(_, let reason):
                status.update { state in
                    if state.failure == nil {
                        state.failure =
                            reason == .clockRejected
                            ? "the host rejected this clock twice (Stale/TooNew)" : "no usable key for the host"
                    }
                }
            case .cycleEnded(let keyID, let answered):
                _ = manager.connectCycleEnded(keyID, answered: answered)
            }
        }
        try client.start()
        defer { client.stop() }
        // Keys in connect order (pending, active, unlisted; newest first): a key the host refuses or
        // retired gives way to the next one.
        var lastFailure: String?
        for (index, key) in order.enumerated() {
            status.update { $0.failure = nil }
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
        while let line = readLine(strippingNewline: true) {
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

    /// Sends one line, waiting for a session again when the live one went down meanwhile.
    static func sendLine(
        _ line: String, client: SessionClient, status: ConnectStatus, timeout: UInt64, address: UDPAddress
    ) throws {
        for _ in 0..<3 {
            let result: Result<Void, TransportError>
            do throws(TransportError) {
                try client.send(type: 0, bytes: Array(line.utf8))
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

    static func stateDirectory(_ parsed: Arguments) throws -> String {
        if let dir = parsed.option("state-dir") { return dir }
        if let xdg = environment("XDG_STATE_HOME"), xdg.hasPrefix("/") { return xdg + "/aether" }
        guard let home = environment("HOME"), home.hasPrefix("/") else {
            throw SessionCommandError("cannot find the state directory: set HOME, XDG_STATE_HOME or --state-dir")
        }
        return home + "/.local/state/aether"
    }

    static func signedInteger(_ parsed: Arguments, _ name: String) throws -> Int64 {
        guard let text = parsed.option(name) else { return 0 }
        guard let value = Int64(text), abs(value) <= 86_400_000 else {
            throw Arguments.UsageError(description: "--\(name) must be an integer of milliseconds (at most a day)")
        }
        return value
    }

    static func environment(_ name: String) -> String? {
        guard let value = unsafe getenv(name) else { return nil }
        return unsafe String(cString: value)
    }

    static func readTombstones(_ base: String) -> [KeyID: UInt64] {
        guard let text = readFile(base + "/host/tombstones") else { return [:] }
        var result: [KeyID: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let id = try? KeyID(hex: String(fields[0])), let at = UInt64(fields[1]) else {
                StandardError.write("warning: ignoring a malformed tombstone line\n")
                continue
            }
            result[id] = at
        }
        return result
    }

    static func readFile(_ path: String) -> String? {
        do throws(IOError) {
            let fd = try Syscall.open(path, flags: O_RDONLY)
            defer { Syscall.close(fd) }
            return String(decoding: try Syscall.readAll(fd, limit: Int.max, path: path), as: UTF8.self)
        } catch {
            return nil
        }
    }

    static func appendLine(_ path: String, _ line: String) throws {
        let fd: Int32
        do throws(IOError) {
            fd = try Syscall.open(path, flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o600)
        } catch {
            throw SessionCommandError("cannot open \(path) to append")
        }
        defer { Syscall.close(fd) }
        do throws(IOError) {
            try Syscall.writeFully(fd, Array(line.utf8), path: path)
            try Syscall.fsync(fd, path: path)
        } catch {
            throw SessionCommandError("cannot write \(path)")
        }
    }
}
