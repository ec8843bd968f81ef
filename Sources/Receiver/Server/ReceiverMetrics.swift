import Synchronization

/// The receiver's counters, rendered in the Prometheus text exposition format (version 0.0.4) at `GET /metrics`.
public final class ReceiverMetrics: Sendable {
    /// The upper bounds of the chunk latency histogram, in seconds.
    public static let latencyBuckets: [Double] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct State {
        var started: [String: Int] = [:]
        var completed: [String: Int] = [:]
        var failed: [String: Int] = [:]
        var bytes: Int64 = 0
        var verifyFailures = 0
        var partialsKept = 0
        var continuationsStarted = 0
        var continuationsCompleted = 0
        var batches = 0
        var batchedFiles = 0
        var requests: [Int: Int] = [:]
        var latencyCounts = [Int](repeating: 0, count: ReceiverMetrics.latencyBuckets.count)
        var latencySum: Double = 0
        var latencyCount = 0
    }
    private let state = Mutex(State())

    /// Empty counters.
    public init() {}

    /// An upload was created with `protocolName` (`native`, `ietf`, `tus`).
    public func uploadStarted(_ protocolName: String) { state.withLock { $0.started[protocolName, default: 0] += 1 } }
    /// An upload completed.
    public func uploadCompleted(_ protocolName: String) {
        state.withLock { $0.completed[protocolName, default: 0] += 1 }
    }
    /// An upload failed (verification at completion, a broken chain).
    public func uploadFailed(_ protocolName: String) { state.withLock { $0.failed[protocolName, default: 0] += 1 } }
    /// Body bytes were stored.
    public func bytesReceived(_ count: Int64) { state.withLock { $0.bytes += count } }
    /// A digest, length or chain check failed.
    public func verifyFailed() { state.withLock { $0.verifyFailures += 1 } }
    /// A cut chunk's received prefix was kept as a partial (`docs/PROTOCOL.md` 3.2.2).
    public func partialKept() { state.withLock { $0.partialsKept += 1 } }
    /// A continuation of a partial was accepted (its body is being read).
    public func continuationStarted() { state.withLock { $0.continuationsStarted += 1 } }
    /// A continued chunk was stored (or found stored) after its last byte came in.
    public func continuationCompleted() { state.withLock { $0.continuationsCompleted += 1 } }
    /// A batch (`docs/PROTOCOL.md` 3.10) of `files` files was answered.
    public func batchAnswered(files: Int) {
        state.withLock {
            $0.batches += 1
            $0.batchedFiles += files
        }
    }
    /// A request was answered with `status`.
    public func answered(_ status: Int) { state.withLock { $0.requests[status, default: 0] += 1 } }
    /// A chunk or append request took `seconds` from its headers to its answer.
    public func chunkLatency(seconds: Double) {
        state.withLock { state in
            for (index, bound) in Self.latencyBuckets.enumerated() where seconds <= bound {
                state.latencyCounts[index] += 1
            }
            state.latencySum += seconds
            state.latencyCount += 1
        }
    }

    /// The text exposition, with the HTTP server's `connections` sampled by the caller.
    public func render(connections: HTTPConnectionStatistics) -> String {
        let state = state.withLock { $0 }
        var out = ""
        func family(_ name: String, _ help: String, _ type: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        let protocols = ["native", "ietf", "tus"]
        family("aether_uploads_started_total", "Uploads created, by protocol.", "counter")
        for name in protocols {
            out += "aether_uploads_started_total{protocol=\"\(name)\"} \(state.started[name] ?? 0)\n"
        }
        family("aether_uploads_completed_total", "Uploads completed, by protocol.", "counter")
        for name in protocols {
            out += "aether_uploads_completed_total{protocol=\"\(name)\"} \(state.completed[name] ?? 0)\n"
        }
        family("aether_uploads_failed_total", "Uploads that failed verification, by protocol.", "counter")
        for name in protocols {
            out += "aether_uploads_failed_total{protocol=\"\(name)\"} \(state.failed[name] ?? 0)\n"
        }
        family("aether_received_bytes_total", "Body bytes stored.", "counter")
        out += "aether_received_bytes_total \(state.bytes)\n"
        family("aether_verify_failures_total", "Digest, length, chain or Merkle checks that failed.", "counter")
        out += "aether_verify_failures_total \(state.verifyFailures)\n"
        family("aether_chunk_partials_kept_total", "Cut chunks whose received prefix was kept.", "counter")
        out += "aether_chunk_partials_kept_total \(state.partialsKept)\n"
        family("aether_chunk_continuations_total", "Continuations of a kept prefix, by outcome.", "counter")
        out += "aether_chunk_continuations_total{outcome=\"started\"} \(state.continuationsStarted)\n"
        out += "aether_chunk_continuations_total{outcome=\"stored\"} \(state.continuationsCompleted)\n"
        family("aether_batches_total", "Batches of whole small files answered.", "counter")
        out += "aether_batches_total \(state.batches)\n"
        family("aether_batched_files_total", "Files carried by the batches answered.", "counter")
        out += "aether_batched_files_total \(state.batchedFiles)\n"
        family("aether_requests_total", "Requests answered, by status.", "counter")
        for status in state.requests.keys.sorted() {
            out += "aether_requests_total{status=\"\(status)\"} \(state.requests[status] ?? 0)\n"
        }
        family("aether_chunk_seconds", "Time from a chunk or append request's headers to its answer.", "histogram")
        for (index, bound) in Self.latencyBuckets.enumerated() {
            out += "aether_chunk_seconds_bucket{le=\"\(Self.format(bound))\"} \(state.latencyCounts[index])\n"
        }
        out += "aether_chunk_seconds_bucket{le=\"+Inf\"} \(state.latencyCount)\n"
        out += "aether_chunk_seconds_sum \(state.latencySum)\n"
        out += "aether_chunk_seconds_count \(state.latencyCount)\n"
        family("aether_active_connections", "Connections open now.", "gauge")
        out += "aether_active_connections \(connections.open)\n"
        family(
            "aether_connection_limit",
            "Connections open at once, in all (near it, slots are shared fairly between addresses).", "gauge")
        out += "aether_connection_limit \(connections.limit)\n"
        family(
            "aether_connection_limit_per_client", "Connections open at once per client address or IPv6 /64 (0: none).",
            "gauge")
        out += "aether_connection_limit_per_client \(connections.perClientLimit)\n"
        family(
            "aether_header_timeout_seconds",
            "Seconds a connection's first request head may take from the accept.",
            "gauge")
        out += "aether_header_timeout_seconds \(Self.format(connections.headerTimeoutSeconds))\n"
        family(
            "aether_idle_timeout_seconds",
            "Seconds a request may stay without a byte moving, and a kept-alive connection without a new head.", "gauge"
        )
        out += "aether_idle_timeout_seconds \(Self.format(connections.idleTimeoutSeconds))\n"
        family("aether_connections_accepted_total", "Connections admitted.", "counter")
        out += "aether_connections_accepted_total \(connections.accepted)\n"
        family("aether_connections_refused_total", "Connections refused at accept, by reason.", "counter")
        out += "aether_connections_refused_total{reason=\"per-client-limit\"} \(connections.refusedPerClient)\n"
        out += "aether_connections_refused_total{reason=\"fair-share\"} \(connections.refusedFairShare)\n"
        family("aether_connections_closed_total", "Connections or requests cut by a limit, by reason.", "counter")
        out += "aether_connections_closed_total{reason=\"header-timeout\"} \(connections.closedHeaderTimeout)\n"
        out += "aether_connections_closed_total{reason=\"idle-timeout\"} \(connections.closedIdleTimeout)\n"
        out += "aether_connections_closed_total{reason=\"evicted\"} \(connections.closedEvicted)\n"
        return out
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
