public import AetherScheduling
public import AetherTransport

/// What an upload reports while it runs, in order, on `ChunkedUploader.events()`.
public enum UploadEvent: Sendable {
    /// The destination could not be reached yet (reset or refused) and is asked again for a while (`UploadJob`).
    case waiting(String)
    /// The protocol chosen for the destination (`UploadJob`, before the upload starts).
    case destination(DestinationReport)
    /// The connections the first requests run on were opened ahead (`UploadJob`'s `ConnectionWarmup`).
    case connectionsWarmed(ConnectionWarmup.Report)
    /// The default route moved: the requests in flight were abandoned and go again on the new path (`PathWatch`).
    case pathChanged(String)
    /// How the upload started: fresh, or resumed at a level (sent once, first).
    case resume(ResumeReport)
    /// The speed tier, chunk size or parallelism the scheduler chose (first decision and every change).
    case tierChanged(TierReport)
    /// The byte counters after a change (at most one per acknowledged part, plus the start).
    case progress(UploadProgress)
    /// The destination acknowledged a part.
    case chunkAcknowledged(PartReceipt)
    /// The destination acknowledged a request: one part, or a run of consecutive parts (its size follows the link).
    case requestAcknowledged(RequestReport)
    /// A part is sent again after a retryable failure.
    case retry(RetryReport)
    /// A progress safety valve opened or closed (wire-ack divergence over 8%, acknowledged bytes not verified).
    case safetyValve(ProgressLayers.Event)
    /// The upload finished and its receipt matched the local digests (always the last event).
    case completed(UploadOutcome)
}

/// How an upload started.
public struct ResumeReport: Sendable, Hashable {
    /// The deepest resume level that held (`.none`: started fresh).
    public let level: ResumeLevel
    /// Parts already stored at the destination and not sent again.
    public let reusedParts: Int
    /// Bytes already stored at the destination and not sent again.
    public let reusedBytes: Int64
    /// Why the upload did not resume (or resumed less), for people; nil when nothing was refused.
    public let reason: String?
}

/// How far the resume checks went (ResumePlanner's three levels).
public enum ResumeLevel: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// No usable earlier attempt: a fresh upload.
    case none = 0
    /// Level 1: the file fingerprint matched the snapshot.
    case fingerprint = 1
    /// Level 2: the server said what it holds, and that was taken.
    case server = 2
    /// Level 3: the server's commitment-chain head matched the local chain over the held prefix.
    case chain = 3

    public static func < (lhs: ResumeLevel, rhs: ResumeLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .none: "fresh"
        case .fingerprint: "level 1 (file fingerprint)"
        case .server: "level 2 (server progress)"
        case .chain: "level 3 (chain verified)"
        }
    }
}

/// The scheduler's choice.
public struct TierReport: Sendable, Hashable {
    /// The speed tier of the predicted throughput.
    public let tier: NetworkSpeedTier
    /// The part size of this upload (fixed once the upload is created).
    public let chunkSize: Int64
    /// Parts in flight at once from now on.
    public let parallelism: Int
    /// The predicted throughput in bits per second (0 before the first measurement).
    public let predictedBitsPerSecond: Double
    /// Bytes one request carries from now on: a run of consecutive parts (backends that take runs), else a part.
    public var requestSize: Int64 = 0
    /// The device's degradation level (thermal, battery, memory) that capped this decision.
    public var resourceLevel = DegradationLevel.normal
}

/// Byte counters of one upload.
public struct UploadProgress: Sendable, Hashable {
    /// The object size.
    public let totalBytes: Int64
    /// Bytes handed to the backend (including parts still in flight and parts stored before a resume).
    public let sentBytes: Int64
    /// Bytes the destination acknowledged (including parts stored before a resume).
    public let acknowledgedBytes: Int64
    /// Acknowledged bytes whose digest the destination checked (a per-part checksum it verifies or returned).
    public let verifiedBytes: Int64
    /// Throughput of this run in bytes per second (acknowledged bytes over elapsed time).
    public let bytesPerSecond: Double
    /// The current speed tier.
    public let tier: NetworkSpeedTier
    /// What to show, 0...1: the acknowledged share smoothed (Savitzky-Golay), never going back, slowed in the
    /// last 5%, reaching 1 only when every byte is acknowledged and verified (ProgressLayers).
    public let displayedFraction: Double
    /// Seconds until every byte is acknowledged at the current rate; nil while unknown.
    public let secondsRemaining: Double?
    /// True while a growing file is followed (`--follow`): `totalBytes` is then what the file held when last
    /// looked at, not the final size, and there is no share or ETA to show.
    public var following = false

    /// Acknowledged share in 0...1 (1 for an empty object).
    public var fraction: Double { totalBytes == 0 ? 1 : Double(acknowledgedBytes) / Double(totalBytes) }
}

/// One retry.
public struct RetryReport: Sendable {
    /// The part sent again.
    public let index: Int
    /// The attempt about to be made (2 for the first retry).
    public let attempt: Int
    /// Why the previous attempt failed.
    public let cause: TransportError
    /// The wait before the attempt, in seconds.
    public let delay: Double
}
