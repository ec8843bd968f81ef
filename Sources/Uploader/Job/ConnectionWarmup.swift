import AetherIO
import AetherTransport

/// Opens the connections the first requests will run on (DNS, TCP, TLS) while the uploader reads and digests the
/// first chunks, so the streams after the first do not each wait a handshake when their first chunk is ready
/// (`ConnectionPrewarmer`; upload-engine v2.2). The detection's `OPTIONS` already left one connection open where it
/// asked the server; the rest are opened here, all at once. Best effort: a failed warm-up changes nothing, the request
/// that needs the connection opens it.
public enum ConnectionWarmup {
    /// What the warm-up did: connections asked for, how many were already open, the slowest set-up.
    public struct Report: Sendable, Hashable {
        /// Connections asked for.
        public let connections: Int
        /// Of those, connections that were open already (the detection's).
        public let alreadyWarm: Int
        /// Of those, connections that could not be opened.
        public let failed: Int
        /// The slowest set-up (name lookup, connect, TLS), in milliseconds.
        public let slowestMilliseconds: Double
    }

    /// The connections to have open for an upload through `detected`: one per stream the upload starts with (the
    /// configured `parallel`, else four where parts may go in parallel, else one). The detection's connection is
    /// idle while they are asked for, so one of them finds it (`alreadyWarm`); a single stream needs none beyond it.
    static func connections(for detected: DetectedBackend, parallel: Int?) -> Int {
        // Under a low open-file limit, connections opened ahead only compete with the upload's own descriptors (the
        // snapshot, the telemetry, its requests): none then, so the warm-up never makes an upload fail.
        guard OpenFileLimit.current >= minimumOpenFileLimit else { return 0 }
        let streams = detected.backend.capabilities.parallelParts ? min(parallel ?? 4, 16) : 1
        return streams == 1 && detected.offer != nil ? 0 : streams
    }

    /// The open-file limit under which nothing is opened ahead.
    static let minimumOpenFileLimit = 64

    /// Opens `count` connections to `origin` through `client` at once and reports what it did; nil when there is
    /// nothing to open.
    static func run(client: HTTPClient, origin: String, count: Int) async -> Report? {
        guard count > 0 else { return nil }
        let prewarmer = ConnectionPrewarmer(client: client)
        let reports = await withTaskGroup(of: ConnectionPrewarmer.Report?.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do { return try await prewarmer.prewarm(origin: origin) } catch { return nil }
                }
            }
            var reports: [ConnectionPrewarmer.Report?] = []
            for await report in group { reports.append(report) }
            return reports
        }
        let done = reports.compactMap { $0 }
        let slowest = done.map { $0.total / .milliseconds(1) }.max() ?? 0
        return Report(
            connections: count, alreadyWarm: done.count { $0.alreadyWarm }, failed: reports.count - done.count,
            slowestMilliseconds: slowest)
    }
}
