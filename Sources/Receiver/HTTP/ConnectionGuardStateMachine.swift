/// Whose connection it is, for the per-client limit: an IPv4 address, or the /64 prefix of an IPv6 address (one
/// host is given a whole /64, so counting full addresses would let it open any number). An IPv4-mapped IPv6
/// address is its IPv4 address.
enum ClientAddressKey: Hashable, Sendable {
    case v4(UInt32)
    case v6Prefix(UInt64)
    case other
}

/// Which connections the HTTP server admits and which it cuts (`docs/RECEIVER.md`, Limits): at most
/// `perClientLimit` connections open at once per client address; a connection's first header block complete within
/// `headerTimeout` of its accept, and each later one within `keepAliveTimeout` of the end of the request before it
/// (a kept-alive connection may wait as long as a request may stay idle, as it could before, while a new one must
/// show a whole request soon). Both deadlines are total: bytes trickling in do not move them, so a client cannot
/// keep a connection by sending one header byte at a time. Near the connection limit the slots are shared fairly
/// between addresses: an address holding its equal share already is refused at accept (`admit`), and each admitted
/// connection evicts a waiting one of the address holding the most (`evictionDue`), so that connections from many
/// addresses that never send a head cannot hold every slot, nor churn it full. Pure: the owner passes the
/// monotonic time and holds it in a Mutex; connections are named by an opaque id.
struct ConnectionGuardStateMachine: Sendable {
    /// What is counted, for `/metrics`.
    struct Counters: Sendable, Hashable {
        /// Connections admitted.
        var accepted = 0
        /// Connections refused at accept because their client held `perClientLimit` already.
        var refusedPerClient = 0
        /// Connections refused at accept near the connection limit because their client held its fair share.
        var refusedFairShare = 0
        /// Connections cut because a header block was not complete by its deadline.
        var closedHeaderTimeout = 0
        /// Requests cut by the idle timeout (no byte received or sent for that long).
        var closedIdleTimeout = 0
        /// Connections waiting for a request head shut down near the connection limit to make room for a new one.
        var closedEvicted = 0
    }

    private struct Tracked {
        let key: ClientAddressKey
        let socket: Int32
        /// When the header block being waited for must be complete (monotonic ns); nil while a request runs.
        var headerDeadline: Int64?
        /// Since when the connection has waited for a header block (its accept, or the end of its last request);
        /// nil while a request runs or once it is being cut.
        var waitingSince: Int64?
        /// Shut down by a deadline or an eviction, not yet closed: it no longer counts toward its address's share.
        var cut = false
    }

    /// Connections at once per client address; 0 is no limit.
    let perClientLimit: Int
    /// Nanoseconds a connection's first header block may take from the accept; 0 is no deadline at all.
    let headerTimeout: Int64
    /// Nanoseconds a later header block may take from the end of the previous request (at least `headerTimeout`).
    let keepAliveTimeout: Int64
    /// Connections open at once in all; 0 is no limit. libmicrohttpd closes a connection accepted at its limit
    /// before the accept policy runs, so room is made below it: from `connectionLimit - evictionHeadroom` open
    /// connections on, each admitted one evicts a waiting connection.
    let connectionLimit: Int
    private var connections: [UInt: Tracked] = [:]
    private var perClient: [ClientAddressKey: Int] = [:]
    private(set) var counters = Counters()

    init(
        perClientLimit: Int, headerTimeoutNanoseconds: Int64, keepAliveTimeoutNanoseconds: Int64 = 0,
        connectionLimit: Int = 0
    ) {
        self.perClientLimit = max(0, perClientLimit)
        self.headerTimeout = max(0, headerTimeoutNanoseconds)
        self.keepAliveTimeout = max(headerTimeout, keepAliveTimeoutNanoseconds)
        self.connectionLimit = max(0, connectionLimit)
    }

    /// The slots kept free below `connectionLimit`: a sixteenth of it, at least one.
    var evictionHeadroom: Int { max(1, connectionLimit / 16) }

    /// Connections open now.
    var openCount: Int { connections.count }

    /// Connections of `key` open now.
    func openCount(of key: ClientAddressKey) -> Int { perClient[key] ?? 0 }

    /// Whether a socket just accepted from `key` may become a connection (a refusal is counted). The server's
    /// accepting thread calls this and then `opened` for the same socket before it accepts the next one, so the
    /// count checked here is the one `opened` raises. Near the connection limit (`evictionHeadroom` below it) an
    /// address that holds its equal share of the limit (the limit over the addresses holding connections, this one
    /// counted) is refused too: an eviction only shuts a socket down and libmicrohttpd counts it until its thread
    /// has closed it, so attackers that reconnect the moment they are evicted would otherwise keep the daemon at
    /// its own limit, where it closes every new connection, a legitimate client's included, before this runs.
    /// Without a per-client limit (behind a proxy every client shares its address) no share is enforced: a health
    /// check from another address would otherwise halve the proxy's share.
    mutating func admit(_ key: ClientAddressKey) -> Bool {
        guard perClientLimit == 0 || (perClient[key] ?? 0) < perClientLimit else {
            counters.refusedPerClient += 1
            return false
        }
        guard nearLimit, perClientLimit > 0 else { return true }
        let held = liveCounts()
        let addresses = held.count + (held[key] == nil ? 1 : 0)
        guard (held[key] ?? 0) < max(1, connectionLimit / addresses) else {
            counters.refusedFairShare += 1
            return false
        }
        return true
    }

    /// Whether the open connections have reached the limit less its headroom.
    private var nearLimit: Bool { connectionLimit > 0 && connections.count >= connectionLimit - evictionHeadroom }

    /// The connections each address holds, those already being cut left out.
    private func liveCounts() -> [ClientAddressKey: Int] {
        var held: [ClientAddressKey: Int] = [:]
        for tracked in connections.values where !tracked.cut { held[tracked.key, default: 0] += 1 }
        return held
    }

    /// Connection `id` from `key` on `socket` started at `now`: its first header block is due by the deadline.
    mutating func opened(_ id: UInt, key: ClientAddressKey, socket: Int32, now: Int64) {
        if let earlier = connections[id] { release(earlier.key) }
        let due = deadline(now, headerTimeout)
        connections[id] = Tracked(key: key, socket: socket, headerDeadline: due, waitingSince: now)
        perClient[key, default: 0] += 1
        counters.accepted += 1
    }

    /// Connection `id`'s header block is complete: its request runs under the idle timeout only.
    mutating func headerReceived(_ id: UInt) {
        connections[id]?.headerDeadline = nil
        connections[id]?.waitingSince = nil
    }

    /// Connection `id`'s request ended at `now` (`timedOut`: cut by the idle timeout); the next header block is due
    /// `keepAliveTimeout` from now.
    mutating func requestEnded(_ id: UInt, now: Int64, timedOut: Bool) {
        if timedOut { counters.closedIdleTimeout += 1 }
        let due = deadline(now, keepAliveTimeout)
        connections[id]?.headerDeadline = due
        connections[id]?.waitingSince = now
    }

    /// Connection `id` is closed; its socket is no longer ours to touch.
    mutating func closed(_ id: UInt) {
        guard let tracked = connections.removeValue(forKey: id) else { return }
        release(tracked.key)
    }

    /// The sockets of connections whose header deadline passed by `now`, to be shut down (each once: its deadline
    /// is cleared and the cut counted). The caller shuts them before it lets go of the lock that also guards
    /// `closed`, so that a socket number is never shut after its connection closed and the number was reused.
    mutating func expired(now: Int64) -> [Int32] {
        let due = connections.filter { entry in entry.value.headerDeadline.map { $0 <= now } ?? false }
        for id in due.keys {
            connections[id]?.headerDeadline = nil
            connections[id]?.waitingSince = nil
            connections[id]?.cut = true
        }
        let sockets = due.values.map(\.socket).filter { $0 >= 0 }
        counters.closedHeaderTimeout += sockets.count
        return sockets
    }

    /// The socket to shut down to make room for a connection being admitted: with `connectionLimit -
    /// evictionHeadroom` or more open, a connection waiting for a request head (since its accept or the end of its
    /// last request) of the address that holds the most connections, the one that has waited longest of those; or
    /// nil (there is room, or every connection runs a request, which is never chosen). The choice is counted and
    /// its wait ended, so it is chosen once. The limit is never reached by connections that wait: a legitimate
    /// client's connection sends its head at once and is then out of reach, and an address with few connections is
    /// chosen only after those that hold more, while a slowloris's connections are many and wait; a flood that
    /// holds the slots must keep replacing its own connections.
    mutating func evictionDue() -> Int32? {
        guard nearLimit else { return nil }
        let held = liveCounts()
        var chosen: (id: UInt, held: Int, since: Int64, socket: Int32)?
        for (id, tracked) in connections {
            guard let since = tracked.waitingSince, tracked.socket >= 0, !tracked.cut else { continue }
            let count = held[tracked.key] ?? 0
            let better = chosen.map { count > $0.held || (count == $0.held && since < $0.since) } ?? true
            if better { chosen = (id, count, since, tracked.socket) }
        }
        guard let chosen else { return nil }
        connections[chosen.id]?.waitingSince = nil
        connections[chosen.id]?.headerDeadline = nil
        connections[chosen.id]?.cut = true
        counters.closedEvicted += 1
        return chosen.socket
    }

    private func deadline(_ now: Int64, _ timeout: Int64) -> Int64? {
        headerTimeout == 0 ? nil : now &+ timeout
    }

    private mutating func release(_ key: ClientAddressKey) {
        let remaining = (perClient[key] ?? 1) - 1
        perClient[key] = remaining > 0 ? remaining : nil
    }
}
