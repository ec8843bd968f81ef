public import AetherIO

/// What a capture reports while it runs, on `CaptureJob.events()`.
public enum CaptureEvent: Sendable {
    /// The walk is done: what will be sent, and what an earlier run already did.
    case started(CaptureTotals)
    /// An event of the job's own (`UploadEvent`'s `.waiting`, `.destination`, `.connectionsWarmed`,
    /// `.pathChanged`): the destination probed once, the connections and the path watched for every file.
    case job(UploadEvent)
    /// With `--recheck` (`Options.recheckDestination`): files the journal lists as finished that the destination no
    /// longer holds complete (relative paths); they are sent again.
    case lostAtDestination([String])
    /// A file or directory left out (a FIFO, a device, a link not followed, a directory that cannot be read).
    case skipped(path: String, reason: String)
    /// An event of one file's upload (`UploadEvent`), with the file's relative path.
    case file(path: String, UploadEvent)
    /// A file is at the destination, verified: uploaded now, or found in the journal of an earlier run.
    case fileCompleted(CaptureFileResult)
    /// A file could not be uploaded; the others go on, and the same call later tries it again.
    case fileFailed(CaptureFailure)
    /// The whole job's counters (after every file event that changes them).
    case progress(CaptureProgress)
    /// The job ended (always the last event); `outcome.failed` lists what did not make it.
    case completed(CaptureOutcome)
}

/// The size of a capture.
public struct CaptureTotals: Sendable, Hashable {
    /// Files to be at the destination at the end (those already there included).
    public let files: Int
    /// Their bytes.
    public let bytes: Int64
    /// Files an earlier run already uploaded, unchanged since: not sent again.
    public let alreadyUploaded: Int
    /// Files and directories left out.
    public let skipped: Int
}

/// The counters of a capture.
public struct CaptureProgress: Sendable, Hashable {
    public let totalFiles: Int
    /// Files at the destination, verified.
    public let completedFiles: Int
    public let failedFiles: Int
    public let totalBytes: Int64
    /// Bytes the destination acknowledged: of completed files, and so far of files under way.
    public let acknowledgedBytes: Int64
    /// Acknowledged bytes per second over this run.
    public let bytesPerSecond: Double
    /// Seconds left at that rate; nil before anything was acknowledged.
    public let secondsRemaining: Double?
}

/// One file at the destination.
public struct CaptureFileResult: Sendable, Hashable {
    /// The relative path as bytes, and as text (every uploaded name is UTF-8).
    public let relativePath: [UInt8]
    public var path: String { String(decoding: relativePath, as: UTF8.self) }
    public let size: Int64
    public let sha256: Digest32
    public let merkleRoot: Digest32
    /// Where the destination keeps it.
    public let location: String
    /// True when an earlier run uploaded it and it was not sent again.
    public let alreadyUploaded: Bool
    /// True when this run's spot check proved the destination holds its sampled bytes (a small file outside the
    /// capture's sample is covered by the sample, `docs/CAPTURES.md`).
    public var spotChecked = false
}

/// A file that did not make it.
public struct CaptureFailure: Sendable, Hashable {
    public let path: String
    public let message: String
    /// Whether the destination's receipt disagreed with the file (a verification failure, not a transfer one).
    public let verificationFailed: Bool
}

/// How a capture ended.
public struct CaptureOutcome: Sendable, Hashable {
    /// The files at the destination, in the order of their relative paths.
    public let files: [CaptureFileResult]
    public let failed: [CaptureFailure]
    /// Files and directories left out, with why.
    public let skipped: [CaptureSkip]
    /// The capture's root (`CaptureManifest`) and where the manifest was stored; nil while a file failed.
    public let root: Digest32?
    public let manifestLocation: String?
    /// Whether the destination itself checked the stored manifest against what it holds (a native receiver's `GET
    /// .../capture`, `docs/PROTOCOL.md` 3.11: every file's upload complete with the listed size and digests, the root
    /// recomputed) and served it back byte for byte; false where no such check exists (S3, tus, IETF, an older
    /// receiver).
    public var receiverVerified = false

    /// Whether every file is at the destination and the manifest with them.
    public var complete: Bool { failed.isEmpty && manifestLocation != nil }
    /// Files whose spot check passed in this run.
    public var spotCheckedFiles: Int { files.count { $0.spotChecked } }
}

/// A file or directory left out of a capture.
public struct CaptureSkip: Sendable, Hashable {
    public let path: String
    public let reason: String
}
