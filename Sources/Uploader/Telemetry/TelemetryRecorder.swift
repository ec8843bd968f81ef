public import AetherIO
import AetherSecurity
import Synchronization

/// Where one upload run's telemetry goes: the per-attempt trace and the signed audit log as files under
/// `<state>/telemetry/` (mode 0600, one pair per run: `<id>-<ms>-<random>.trace.jsonl` and `.audit.jsonl`, since
/// an audit chain starts at sequence 0 in each run), an optional extra trace file (`--trace FILE`), and at the end
/// the summary with Laplace noise (`<id>.summary.json`, read back by `aether status --summary ID`). `<id>` is the
/// lowercase hex SHA-256 of the upload key, as for snapshots. Lines hold numbers and names only (never contents,
/// digests of them, paths or keys). A failed write is counted (`writeFailures`), never fails the upload.
public final class TelemetryRecorder: Sendable {
    /// The telemetry (trace lines, audit entries, counters).
    public let telemetry: UploadTelemetry
    private let directory: FilePath
    private let name: String
    private struct Files {
        let trace: Int32
        let audit: Int32
        let extra: Int32?
    }
    private let descriptors: Mutex<Files>
    private let failures = Mutex(0)

    /// A recorder for the upload `uploadKey` in `stateDirectory`, also writing the trace to `traceFile` (created; an
    /// existing file is refused) when given.
    public init(
        stateDirectory: UploadStateDirectory, uploadKey: String, traceFile: FilePath? = nil,
        clock: any AetherClock = SystemClock()
    ) throws(UploaderError) {
        name = SHA256.hash(Array(uploadKey.utf8)).hex
        let key = try UploadTelemetry.auditKey(master: try stateDirectory.masterKey())
        telemetry = UploadTelemetry(uploadID: String(name.prefix(16)), auditKey: key, clock: clock)
        directory = stateDirectory.path.appending("telemetry")
        let root = try stateDirectory.open()
        defer { AnchoredFiles.closeDescriptor(root) }
        let fd = try stateDirectory.openSubdirectory("telemetry", in: root)
        defer { AnchoredFiles.closeDescriptor(fd) }
        let run = "\(name)-\(clock.wallMilliseconds())-\(Hex.encode(SecureRandom.bytes(4)))"
        let shown = directory.description
        let trace: Int32
        let audit: Int32
        do {
            trace = try AnchoredFiles.createExclusive(directory: fd, FilePath(run + ".trace.jsonl"), mode: 0o600)
        } catch {
            throw UploadStateDirectory.failure("create", shown + "/" + run + ".trace.jsonl", error)
        }
        do {
            audit = try AnchoredFiles.createExclusive(directory: fd, FilePath(run + ".audit.jsonl"), mode: 0o600)
        } catch {
            AnchoredFiles.closeDescriptor(trace)
            throw UploadStateDirectory.failure("create", shown + "/" + run + ".audit.jsonl", error)
        }
        var extra: Int32?
        if let traceFile {
            guard traceFile.lastComponent.isValidUTF8 else {
                AnchoredFiles.closeDescriptor(trace)
                AnchoredFiles.closeDescriptor(audit)
                throw UploaderError(.invalidArgument, "the trace file's name must be UTF-8")
            }
            do {
                let parent = try AnchoredFiles.openDirectory(traceFile.directory)
                defer { AnchoredFiles.closeDescriptor(parent) }
                extra = try AnchoredFiles.createExclusive(
                    directory: parent, traceFile.lastComponent, mode: 0o600)
            } catch {
                AnchoredFiles.closeDescriptor(trace)
                AnchoredFiles.closeDescriptor(audit)
                throw UploaderError(
                    .invalidArgument, "the trace file \(traceFile) cannot be created (it must not exist yet)")
            }
        }
        descriptors = Mutex(Files(trace: trace, audit: audit, extra: extra))
    }

    deinit {
        let files = descriptors.withLock { $0 }
        AnchoredFiles.closeDescriptor(files.trace)
        AnchoredFiles.closeDescriptor(files.audit)
        if let extra = files.extra { AnchoredFiles.closeDescriptor(extra) }
    }

    /// Writes that failed so far.
    public var writeFailures: Int { failures.withLock { $0 } }

    /// The trace file's and the audit file's directory.
    public var telemetryDirectory: FilePath { directory }

    /// Records one attempt.
    public func trace(_ line: ChunkTrace) {
        var trace = line
        trace.uploadID = telemetry.uploadID
        do {
            let bytes = try telemetry.record(trace)
            descriptors.withLock { fds in
                write(bytes, fds.trace)
                if let extra = fds.extra { write(bytes, extra) }
            }
        } catch {
            failures.withLock { $0 += 1 }
        }
    }

    /// Appends a signed audit entry.
    public func audit(_ event: AuditEvent, chunkIndex: Int? = nil, resumeLevel: Int? = nil, errorCode: String? = nil) {
        do {
            let bytes = try telemetry.auditLine(
                event, chunkIndex: chunkIndex, resumeLevel: resumeLevel, errorCode: errorCode)
            descriptors.withLock { fds in write(bytes, fds.audit) }
        } catch {
            failures.withLock { $0 += 1 }
        }
    }

    /// Writes the summary with Laplace noise (ε = 1.0) for the upload, replacing an earlier one atomically.
    public func finish(completed: Bool, resumed: Bool, totalBytes: UInt64, seconds: Double) {
        do {
            let line = try telemetry.exportedSummary(
                completed: completed, resumed: resumed, totalBytes: totalBytes, seconds: seconds)
            try AtomicFile.write(line, to: directory.appending(name + ".summary.json"), options: .secret)
        } catch {
            failures.withLock { $0 += 1 }
        }
    }

    /// The exported (noisy) summary of `uploadKey`, or nil when none was written.
    public static func summary(stateDirectory: UploadStateDirectory, uploadKey: String) throws(UploaderError)
        -> [UInt8]?
    {
        let name = SHA256.hash(Array(uploadKey.utf8)).hex + ".summary.json"
        let path = stateDirectory.path.appending("telemetry").appending(name)
        do {
            return try GuardedFile(path: path).readAll(maximumBytes: 64 << 10)
        } catch  where error.errno == 2 {
            return nil
        } catch {
            throw UploaderError(.systemCall, "the summary \(path) cannot be read: \(error.message)", errno: error.errno)
        }
    }

    private func write(_ bytes: [UInt8], _ fd: Int32) {
        let result = unsafe bytes.withUnsafeBytes { raw in
            Result { () throws(AnchoredFiles.Errno) in try unsafe AnchoredFiles.writeFully(fd, from: raw) }
        }
        if case .failure = result { failures.withLock { $0 += 1 } }
    }
}
