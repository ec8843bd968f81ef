import AetherIO
import AetherScheduling
import AetherTransport
import AetherUploader
import FoundationEssentials
import Glibc
import Synchronization

/// Shows an upload's events: a progress bar redrawn in place (at most 10 times a second) on a terminal, a plain
/// line every few seconds when standard output is not a terminal, one JSON object per line with `--json`, and
/// nothing but errors with `--quiet`. Events arrive from several tasks; the state is behind a lock.
final class UploadProgressView: Sendable {
    enum Mode {
        case terminal, lines, json, quiet
    }

    private struct State {
        var lastDraw = -1.0
        var tier = "-"
        var drewBar = false
        var lastFraction = -1.0
        var prewarm: ConnectionWarmup.Report?
    }

    let mode: Mode
    let id: String
    private let clock = SystemClock()
    private let state = Mutex(State())

    init(id: String, json: Bool, quiet: Bool) {
        self.id = id
        if json {
            mode = .json
        } else if quiet {
            mode = .quiet
        } else {
            mode = isatty(1) == 1 ? .terminal : .lines
        }
    }

    /// Keeps what the connection warm-up did, for the `completed` line (`prewarmed`); left out when the upload
    /// finished first.
    func notePrewarm(_ result: ConnectionWarmup.Report) {
        state.withLock { $0.prewarm = result }
    }

    /// The default route moved mid-upload (`PathWatch`): the requests in flight were abandoned and go again.
    func notePathChange(_ what: String) {
        switch mode {
        case .json: json(EventJSON(event: "path", id: id, message: what))
        case .terminal, .lines:
            finishBar()
            line("the network path changed (\(what)): the requests in flight are sent again on the new path")
        case .quiet: break
        }
    }

    func note(_ text: String) {
        switch mode {
        case .terminal, .lines: line(text)
        case .json: json(EventJSON(event: "note", id: id, message: text))
        case .quiet: break
        }
    }

    func handle(_ event: UploadEvent) {
        switch event {
        case .waiting(let what): StandardError.write("aether: \(what)\n")
        case .destination(let report): if let note = report.note { self.note(note) }
        case .connectionsWarmed(let report): notePrewarm(report)
        case .pathChanged(let what): notePathChange(what)
        case .resume(let report):
            if mode == .json {
                json(
                    EventJSON(
                        event: "resume", id: id, level: report.level.rawValue, reason: report.reason,
                        reusedParts: report.reusedParts, reusedBytes: report.reusedBytes))
            } else if report.level == .none {
                note("upload \(id): starting" + (report.reason.map { " (\($0))" } ?? ""))
            } else {
                note(
                    "upload \(id): resuming at \(report.level): \(report.reusedParts) parts "
                        + "(\(Self.bytes(report.reusedBytes))) already stored" + (report.reason.map { "; \($0)" } ?? "")
                )
            }
        case .tierChanged(let tier):
            state.withLock { $0.tier = tier.tier.rawValue }
            if mode == .json {
                json(
                    EventJSON(
                        event: "tier", id: id, tier: tier.tier.rawValue, chunkSize: tier.chunkSize,
                        parallelism: tier.parallelism, requestSize: tier.requestSize,
                        resourceLevel: tier.resourceLevel == .normal ? nil : "\(tier.resourceLevel)"))
            }
        case .progress(let progress): show(progress)
        case .safetyValve(let valve):
            if mode == .json { json(EventJSON(event: "valve", id: id, message: Self.describe(valve))) }
        case .chunkAcknowledged(let receipt):
            if mode == .json { json(EventJSON(event: "chunk", id: id, index: receipt.index, length: receipt.length)) }
        case .requestAcknowledged(let request):
            if mode == .json {
                json(
                    EventJSON(
                        event: "request", id: id, index: request.index, length: request.bytes, parts: request.parts,
                        requestSize: request.bytes))
            }
        case .retry(let retry):
            switch mode {
            case .json:
                json(
                    EventJSON(
                        event: "retry", id: id, index: retry.index, attempt: retry.attempt,
                        cause: "\(retry.cause.code): \(retry.cause.message)", delay: retry.delay))
            case .terminal, .lines:
                let what = retry.index >= 0 ? "part \(retry.index)" : "request"
                StandardError.write(
                    "retrying \(what) (attempt \(retry.attempt)) in \(Self.oneDecimal(retry.delay)) s: \(retry.cause.code)\n",
                    control: mode == .terminal ? "\r\u{1B}[K" : "")
            case .quiet: break
            }
        case .completed(let outcome):
            finishBar()
            if mode == .json {
                json(
                    EventJSON(
                        event: "completed", id: id, location: outcome.receipt.location, size: outcome.receipt.size,
                        sha256: outcome.sha256.hex, merkleRoot: outcome.merkleRoot.hex,
                        chainHead: outcome.chainHead.hex, serverVerified: outcome.serverVerified,
                        serverUnchecked: outcome.receipt.unchecked.isEmpty ? nil : outcome.receipt.unchecked,
                        uncheckedReason: outcome.receipt.uncheckedReason, partsSent: outcome.partsSent,
                        bytesSent: outcome.bytesSent, parityShardsSent: outcome.parityShardsSent,
                        spotChecks: outcome.spotChecks.map(SpotChecksJSON.init),
                        congestionControl: outcome.congestionControl,
                        checks: outcome.receipt.checks.isEmpty ? nil : outcome.receipt.checks.map(CheckJSON.init),
                        prewarmed: state.withLock { $0.prewarm }.map(PrewarmJSON.init)))
            } else if mode != .quiet {
                var checked =
                    outcome.serverVerified.isEmpty
                    ? "size and every part acknowledged (the destination returned no digest)"
                    : outcome.serverVerified.joined(separator: ", ") + " matched"
                for check in outcome.receipt.checks {
                    let share = check.parts == check.of ? "" : " (\(check.parts) of \(check.of) parts)"
                    checked += "\n               \(check.party.rawValue): \(check.summary)\(share)"
                }
                if !outcome.receipt.unchecked.isEmpty {
                    checked +=
                        "; NOT checked: \(outcome.receipt.unchecked.joined(separator: ", "))"
                        + (outcome.receipt.uncheckedReason.map { " (\($0))" } ?? "")
                }
                line(
                    "done: \(outcome.receipt.size) bytes at \(outcome.receipt.location)\n  sha256       "
                        + "\(outcome.sha256.hex)\n  merkle root  \(outcome.merkleRoot.hex)\n  chain head   "
                        + "\(outcome.chainHead.hex)\n  verified     \(checked)\n"
                        + (outcome.spotChecks.map { "  spot checks  \(Self.describe($0))\n" } ?? "")
                        + "  sent         \(outcome.partsSent) of \(outcome.partCount) parts, \(outcome.bytesSent) bytes in "
                        + "this run")
            }
        }
    }

    /// The spot checks in a line: how many sampled chunks the receiver proved it holds, or why none was made.
    static func describe(_ report: SpotCheckReport) -> String {
        if let reason = report.notMade { return "not made: \(reason)" }
        return "\(report.verified) of \(report.sampled) sampled chunks proven held (\(report.bytesChecked) bytes, "
            + "\(report.strikes) strikes)"
    }

    /// Ends a bar drawn in place (before any other line).
    func finishBar() {
        let drew = state.withLock { state in
            defer { state.drewBar = false }
            return state.drewBar
        }
        if drew, mode == .terminal { StandardOutput.write("\n") }
    }

    private func show(_ progress: UploadProgress) {
        let now = clock.monotonicSeconds()
        let done = progress.acknowledgedBytes == progress.totalBytes && !progress.following
        let tier: String? = state.withLock { state in
            switch mode {
            case .terminal:
                guard done || now - state.lastDraw >= 0.1 else { return nil }
            case .lines:
                guard (done && state.lastFraction < 1) || now - state.lastDraw >= 2 else { return nil }
            case .json:
                guard done || now - state.lastDraw >= 0.1 else { return nil }
            case .quiet: return nil
            }
            state.lastDraw = now
            state.lastFraction = progress.fraction
            if mode == .terminal { state.drewBar = true }
            // Until the scheduler reports (a followed upload never does), the tier the progress itself carries.
            return state.tier == "-" ? progress.tier.rawValue : state.tier
        }
        guard let tier else { return }
        switch mode {
        case .terminal: StandardOutput.write(Self.bar(progress, tier: tier), control: "\r\u{1B}[K")
        case .lines: line(Self.summary(progress, tier: tier))
        case .json:
            json(
                EventJSON(
                    event: "progress", id: id, tier: tier, total: progress.totalBytes, sent: progress.sentBytes,
                    acknowledged: progress.acknowledgedBytes, verified: progress.verifiedBytes,
                    rate: progress.bytesPerSecond, displayed: progress.displayedFraction,
                    following: progress.following ? true : nil))
        case .quiet: break
        }
    }

    static func describe(_ valve: ProgressLayers.Event) -> String {
        switch valve {
        case .wireAckDivergence(let share):
            "wire-ack divergence: \(Int(share * 100))% of the file is sent but not acknowledged"
        case .wireAckConverged: "wire-ack divergence closed"
        case .ackMerkleDivergence(let unverified): "\(unverified) acknowledged bytes are not verified yet"
        case .ackMerkleConverged: "every acknowledged byte is verified"
        }
    }

    static func bar(_ progress: UploadProgress, tier: String) -> String {
        if progress.following { return "[following] " + summary(progress, tier: tier) }
        let width = 24
        let filled = min(width, Int(progress.displayedFraction * Double(width)))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
            + summary(progress, tier: tier)
    }

    static func summary(_ progress: UploadProgress, tier: String) -> String {
        if progress.following {
            // The total is unknown until the writer is done: bytes and rate only.
            return "following: \(bytes(progress.acknowledgedBytes)) acknowledged of \(bytes(progress.totalBytes)) "
                + "read, \(bytes(Int64(progress.bytesPerSecond)))/s tier \(tier)"
        }
        let percent = Int((progress.displayedFraction * 100).rounded(.down))
        let verified =
            progress.totalBytes == 0 ? 100 : Int(Double(progress.verifiedBytes) * 100 / Double(progress.totalBytes))
        var eta = progress.acknowledgedBytes == progress.totalBytes ? "0s" : "-"
        if let seconds = progress.secondsRemaining, seconds.isFinite, seconds >= 0 {
            eta = seconds < 1 ? "0s" : seconds < 3600 ? "\(Int(seconds))s" : "\(Int(seconds / 60))m"
        }
        return "\(percent)% \(bytes(progress.acknowledgedBytes))/\(bytes(progress.totalBytes)) "
            + "\(bytes(Int64(progress.bytesPerSecond)))/s ETA \(eta) verified \(verified)% tier \(tier)"
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : oneDecimal(value) + " " + units[unit]
    }

    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((max(0, value) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private func line(_ text: String) {
        finishBar()
        StandardOutput.write(text + "\n")
    }

    func json(_ event: EventJSON) { Self.writeJSON(event) }

    /// One `--json` line on standard output: keys sorted, slashes unescaped.
    static func writeJSON(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return }
        StandardOutput.write(bytes: Array(data) + [0x0A])
    }
}

/// One `--json` line.
struct EventJSON: Encodable {
    var event: String
    var id: String
    var message: String? = nil
    var level: Int? = nil
    var reason: String? = nil
    var reusedParts: Int? = nil
    var reusedBytes: Int64? = nil
    var tier: String? = nil
    var chunkSize: Int64? = nil
    var parallelism: Int? = nil
    var total: Int64? = nil
    var sent: Int64? = nil
    var acknowledged: Int64? = nil
    var verified: Int64? = nil
    var rate: Double? = nil
    var displayed: Double? = nil
    var index: Int? = nil
    var length: Int64? = nil
    var attempt: Int? = nil
    var cause: String? = nil
    var delay: Double? = nil
    var location: String? = nil
    var size: Int64? = nil
    var sha256: String? = nil
    var merkleRoot: String? = nil
    var chainHead: String? = nil
    var serverVerified: [String]? = nil
    var serverUnchecked: [String]? = nil
    var uncheckedReason: String? = nil
    var partsSent: Int? = nil
    var bytesSent: Int64? = nil
    var parityShardsSent: Int? = nil
    var exit: Int32? = nil
    var parts: Int? = nil
    var requestSize: Int64? = nil
    var following: Bool? = nil
    var spotChecks: SpotChecksJSON? = nil
    var congestionControl: String? = nil
    var checks: [CheckJSON]? = nil
    var prewarmed: PrewarmJSON? = nil
    var resourceLevel: String? = nil

    enum CodingKeys: String, CodingKey {
        case event, id, message, level, reason, reusedParts = "reused_parts", reusedBytes = "reused_bytes", tier
        case chunkSize = "chunk_size", parallelism, total, sent, acknowledged, verified, rate, displayed, index, length,
            attempt
        case cause, delay, location, size, sha256, merkleRoot = "merkle_root", chainHead = "chain_head"
        case serverVerified = "server_verified", serverUnchecked = "server_unchecked"
        case uncheckedReason = "unchecked_reason", partsSent = "parts_sent", bytesSent = "bytes_sent", exit, parts
        case parityShardsSent = "parity_shards_sent"
        case requestSize = "request_size", following, spotChecks = "spot_checks"
        case congestionControl = "congestion_control", checks, prewarmed, resourceLevel = "resource_level"
    }
}

/// The `prewarmed` member of the `completed` line: the connections opened while the first chunks were read.
struct PrewarmJSON: Encodable {
    var connections: Int
    var alreadyWarm: Int
    var failed: Int
    var slowestMilliseconds: Double

    init(_ result: ConnectionWarmup.Report) {
        connections = result.connections
        alreadyWarm = result.alreadyWarm
        failed = result.failed
        slowestMilliseconds = (result.slowestMilliseconds * 10).rounded() / 10
    }

    enum CodingKeys: String, CodingKey {
        case connections, alreadyWarm = "already_warm", failed, slowestMilliseconds = "slowest_ms"
    }
}

/// One member of the `checks` list of the `completed` line: a check of the stored bytes, by whom, over how many
/// parts (`UploadCheck`).
struct CheckJSON: Encodable {
    var check: String
    var by: String
    var parts: Int
    var of: Int

    init(_ check: UploadCheck) {
        self.check = check.name
        by = check.party.rawValue
        parts = check.parts
        of = check.of
    }
}

/// The `spot_checks` member of the `completed` line: what the Byzantine spot checks did.
struct SpotChecksJSON: Encodable {
    var version: Int?
    var sampled: Int
    var verified: Int
    var strikes: Int
    var bytesChecked: Int64
    var notMade: String?
    var passed: Bool

    init(_ report: SpotCheckReport) {
        version = report.version
        sampled = report.sampled
        verified = report.verified
        strikes = report.strikes
        bytesChecked = report.bytesChecked
        notMade = report.notMade
        passed = report.passed
    }

    enum CodingKeys: String, CodingKey {
        case version, sampled, verified, strikes, bytesChecked = "bytes_checked", notMade = "not_made", passed
    }
}
