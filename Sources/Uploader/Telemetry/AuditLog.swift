import AetherIO
public import AetherSecurity
import Synchronization

/// What an audit entry records.
public enum AuditEvent: String, Sendable, Codable, Hashable {
    /// An upload started.
    case started
    /// An upload resumed (with `resumeLevel`).
    case resumed
    /// A chunk was acknowledged (with `chunkIndex`).
    case chunkAcknowledged = "chunk-acknowledged"
    /// The server's receipt verified.
    case verified
    /// The server's receipt or chain did not verify (with `errorCode`).
    case verificationFailed = "verification-failed"
    /// A snapshot was damaged and the upload restarted from what the server holds.
    case snapshotDamaged = "snapshot-damaged"
    /// The upload was paused or cancelled.
    case cancelled
    /// The upload finished.
    case completed
}

/// One audit record (numbers and names only, like the trace).
public struct AuditEntry: Sendable, Codable, Hashable {
    /// 0, 1, 2 ... within one log.
    public var sequence: UInt64
    /// Wall-clock milliseconds since the epoch.
    public var timeMs: Int64
    /// The caller's opaque upload id.
    public var uploadID: String
    /// What happened.
    public var event: AuditEvent
    /// The chunk concerned, when there is one.
    public var chunkIndex: Int?
    /// The resume level (1, 2 or 3), for `resumed`.
    public var resumeLevel: Int?
    /// An error code, for failures.
    public var errorCode: String?
    /// The lowercase hex MAC of the previous entry ("" for the first): the entries form a chain, so a removed,
    /// reordered or inserted line breaks verification.
    public var previousMAC: String
}

/// An HMAC-SHA-256-signed, chained audit log. Each line is the canonical JSON
/// `{"entry":{...},"mac":"<hex>"}` where the MAC is HMAC-SHA-256 under the audit key over the canonical JSON of
/// the entry. The audit key is derived from the state directory's master key with its own label
/// (`UploadTelemetry.auditKey(master:)`), so it is never the snapshot key.
public final class AuditLog: Sendable {
    /// A signed line as stored.
    public struct SignedEntry: Sendable, Codable, Hashable {
        /// The entry.
        public var entry: AuditEntry
        /// Lowercase hex HMAC-SHA-256 of the entry's canonical JSON.
        public var mac: String
    }

    private struct State {
        var sequence: UInt64 = 0
        var previousMAC = ""
    }

    private let key: SymmetricKey
    private let state = Mutex(State())

    /// A new log signed under `key`.
    public init(key: SymmetricKey) { self.key = key }

    /// Appends an entry and returns its signed line (canonical JSON and a line feed).
    public func append(
        uploadID: String, event: AuditEvent, timeMs: Int64, chunkIndex: Int? = nil, resumeLevel: Int? = nil,
        errorCode: String? = nil
    ) throws(UploaderError) -> [UInt8] {
        try state.withLock { (state) throws(UploaderError) -> [UInt8] in
            let entry = AuditEntry(
                sequence: state.sequence, timeMs: timeMs, uploadID: uploadID, event: event, chunkIndex: chunkIndex,
                resumeLevel: resumeLevel, errorCode: errorCode, previousMAC: state.previousMAC)
            let mac = try Self.mac(of: entry, key: key)
            let line = try CanonicalJSON.line(SignedEntry(entry: entry, mac: mac))
            state.sequence += 1
            state.previousMAC = mac
            return line
        }
    }

    /// Checks a whole log: every MAC, the sequence from 0 and the chain. Returns the entries; any line that does
    /// not parse or verify throws `.verificationFailed` naming its line number (1-based).
    public static func verify(lines: [[UInt8]], key: SymmetricKey) throws(UploaderError) -> [AuditEntry] {
        var entries: [AuditEntry] = []
        var previous = ""
        for (number, line) in lines.enumerated() {
            let signed: SignedEntry
            do {
                signed = try CanonicalJSON.decode(SignedEntry.self, from: line)
            } catch {
                throw UploaderError(.verificationFailed, "audit line \(number + 1) is not a signed entry")
            }
            let expected = try mac(of: signed.entry, key: key)
            // The canonical form is the only form: a line written any other way does not verify either.
            let body = line.last == 0x0a ? Array(line.dropLast()) : line
            let canonical = try CanonicalJSON.encode(signed)
            guard canonical == body, ConstantTime.equals(Array(expected.utf8), Array(signed.mac.utf8)),
                signed.entry.sequence == UInt64(number), signed.entry.previousMAC == previous
            else {
                throw UploaderError(.verificationFailed, "audit line \(number + 1) does not verify")
            }
            previous = signed.mac
            entries.append(signed.entry)
        }
        return entries
    }

    static func mac(of entry: AuditEntry, key: SymmetricKey) throws(UploaderError) -> String {
        let bytes = try CanonicalJSON.encode(entry)
        do {
            return try HMAC.authenticationCode(for: bytes, using: key).hex
        } catch {
            throw UploaderError(.systemCall, "HMAC-SHA-256 failed")
        }
    }
}
