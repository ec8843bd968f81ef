/// The HTTP server's connection limits and what they did, for `/metrics`.
public struct HTTPConnectionStatistics: Sendable, Hashable {
    /// Connections open now.
    public var open: Int
    /// Connections open at once, in all (one accepted past it is closed at once; near it, a waiting connection is
    /// evicted for each new one, and an address holding its equal share is refused).
    public var limit: Int
    /// Connections open at once from one client address (IPv6: one /64); 0 is no limit.
    public var perClientLimit: Int
    /// Seconds a request's header block may take, from the accept or the end of the previous request.
    public var headerTimeoutSeconds: Double
    /// Seconds a connection may stay idle during a request.
    public var idleTimeoutSeconds: Double
    /// Connections admitted since start.
    public var accepted: Int
    /// Connections refused at accept: their client held `perClientLimit` already.
    public var refusedPerClient: Int
    /// Connections refused at accept near `limit`: their client held its equal share of it already.
    public var refusedFairShare: Int
    /// Connections cut because a header block was not complete in `headerTimeoutSeconds`.
    public var closedHeaderTimeout: Int
    /// Requests cut by the idle timeout.
    public var closedIdleTimeout: Int
    /// Connections waiting for a request head shut down near `limit` to make room for a new one.
    public var closedEvicted: Int

    /// Statistics (tests build them; the server reports its own).
    public init(
        open: Int = 0, limit: Int = 0, perClientLimit: Int = 0, headerTimeoutSeconds: Double = 0,
        idleTimeoutSeconds: Double = 0, accepted: Int = 0, refusedPerClient: Int = 0, closedHeaderTimeout: Int = 0,
        closedIdleTimeout: Int = 0, closedEvicted: Int = 0, refusedFairShare: Int = 0
    ) {
        self.open = open
        self.limit = limit
        self.perClientLimit = perClientLimit
        self.headerTimeoutSeconds = headerTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.accepted = accepted
        self.refusedPerClient = refusedPerClient
        self.refusedFairShare = refusedFairShare
        self.closedHeaderTimeout = closedHeaderTimeout
        self.closedIdleTimeout = closedIdleTimeout
        self.closedEvicted = closedEvicted
    }
}
