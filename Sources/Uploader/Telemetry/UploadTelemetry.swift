public import AetherIO
public import AetherSecurity
import Synchronization

/// The telemetry of one upload (upload-engine v2.2, UploadTelemetry): a per-chunk trace as canonical JSON lines,
/// HMAC-SHA-256-signed audit entries, transport fields (protocol, connection reuse, path changes) in every
/// trace line, and a summary exported with Laplace noise (ε = 1.0) for aggregate analytics.
///
/// It returns lines; where they go (a file, stderr, nowhere) is the caller's choice. Nothing it produces holds
/// file contents, digests of them, paths or keys: traces and audit entries are numbers and names, and the
/// upload is named by the caller's opaque id.
public final class UploadTelemetry: Sendable {
    /// The HKDF labels of the audit key, byte for byte; a separate derivation from the snapshot keys.
    public static let auditKeySalt: [UInt8] = Array("aether-telemetry-v1".utf8)
    /// The HKDF info of the audit key.
    public static let auditKeyInfo: [UInt8] = Array("aether-audit-v1 hmac-sha256".utf8)

    /// The audit key: `HKDF-SHA-256(IKM: master, salt: "aether-telemetry-v1", info: "aether-audit-v1 hmac-sha256")`.
    public static func auditKey(master: SymmetricKey) throws(UploaderError) -> SymmetricKey {
        do {
            return try HKDF.deriveKey(inputKeyMaterial: master, salt: auditKeySalt, info: auditKeyInfo)
        } catch {
            throw UploaderError(.systemCall, "could not derive the audit key")
        }
    }

    private struct Counters {
        var chunksSent = 0
        var retries = 0
        var acknowledgedBytes: UInt64 = 0
    }

    /// The caller's opaque upload id.
    public let uploadID: String
    /// The signed audit log of this upload.
    public let audit: AuditLog
    private let clock: any AetherClock
    private let counters = Mutex(Counters())

    /// Telemetry for `uploadID`, signing audit entries under `auditKey` (see `auditKey(master:)`).
    public init(uploadID: String, auditKey: SymmetricKey, clock: any AetherClock) {
        self.uploadID = uploadID
        self.audit = AuditLog(key: auditKey)
        self.clock = clock
    }

    /// Records one attempt and returns its trace line (canonical JSON and a line feed).
    public func record(_ trace: ChunkTrace) throws(UploaderError) -> [UInt8] {
        let line = try CanonicalJSON.line(trace)
        counters.withLock {
            $0.chunksSent += 1
            if trace.outcome == .retried || trace.outcome == .failed { $0.retries += 1 }
            if trace.outcome == .acknowledged { $0.acknowledgedBytes += UInt64(max(0, trace.length)) }
        }
        return line
    }

    /// Appends a signed audit entry stamped with the clock's wall time and returns its line.
    public func auditLine(
        _ event: AuditEvent, chunkIndex: Int? = nil, resumeLevel: Int? = nil, errorCode: String? = nil
    ) throws(UploaderError) -> [UInt8] {
        try audit.append(
            uploadID: uploadID, event: event, timeMs: clock.wallMilliseconds(), chunkIndex: chunkIndex,
            resumeLevel: resumeLevel, errorCode: errorCode)
    }

    /// The exact summary of what was recorded (kept local; export `exportedSummary`).
    public func summary(completed: Bool, resumed: Bool, totalBytes: UInt64, seconds: Double) -> UploadSummary {
        let counts = counters.withLock { $0 }
        return UploadSummary(
            completed: completed, resumed: resumed, chunksSent: counts.chunksSent, retries: counts.retries,
            bytes: totalBytes, seconds: seconds)
    }

    /// The summary with Laplace noise, as one canonical JSON line, with noise from the system CSPRNG.
    public func exportedSummary(completed: Bool, resumed: Bool, totalBytes: UInt64, seconds: Double)
        throws(UploaderError) -> [UInt8]
    {
        var generator = SecureRandom()
        return try exportedSummary(
            completed: completed, resumed: resumed, totalBytes: totalBytes, seconds: seconds, using: &generator)
    }

    /// The summary with Laplace noise from `generator` (a seeded one in tests), as one canonical JSON line.
    public func exportedSummary(
        completed: Bool, resumed: Bool, totalBytes: UInt64, seconds: Double,
        using generator: inout some RandomNumberGenerator
    ) throws(UploaderError) -> [UInt8] {
        let exact = summary(completed: completed, resumed: resumed, totalBytes: totalBytes, seconds: seconds)
        return try CanonicalJSON.line(exact.privatized(using: &generator))
    }
}
