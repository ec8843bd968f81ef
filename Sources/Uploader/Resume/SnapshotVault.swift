import AetherIO
import AetherSecurity
import Synchronization

/// Encrypted resume snapshots, one file per upload key, in `<state dir>/snapshots/` (mode 0700).
///
/// The vault stores opaque bytes: the resume manager decides what a snapshot holds. Each file is AES-256-GCM
/// under a key derived per upload key with HKDF-SHA-256 from the state directory's master key
/// (`ResumeKeyDerivation`, cached in a `SessionKeyCache`), with the file's header, which holds the format version
/// and the upload key, as associated data (format: `SnapshotFormat`, docs/UPLOADER.md). A write is atomic
/// (`AtomicFile` with the `.secret` options: a temporary file of mode 0600, fsync, rename, fsync of the
/// directory), cheap enough to run after every acknowledged chunk (see docs/UPLOADER.md for the measurement).
///
/// Reading never trusts the file system: a file that is not a regular file of this user with mode 0600, or
/// whose framing or tag does not verify, is reported as `SnapshotDamage` naming the file and is left as it
/// is; `store` refuses to replace a damaged file unless the caller says so (`replacingDamaged`).
public final class SnapshotVault: Sendable {
    /// What `load` found for an upload key.
    public enum Loaded: Sendable, Equatable {
        /// No snapshot for this key.
        case absent
        /// A file that does not open; nothing was changed.
        case damaged(SnapshotDamage)
        /// The snapshot bytes as stored.
        case snapshot([UInt8])
    }

    /// What the vault holds.
    public struct Listing: Sendable, Equatable {
        /// The upload keys of the files whose framing is intact, sorted (a tag is checked only by `load`).
        public var keys: [String]
        /// The files that are not snapshots of the key their name says.
        public var damaged: [SnapshotDamage]
    }

    /// The subdirectory of the state directory that holds the snapshots.
    public static let directoryName = "snapshots"
    /// The default largest snapshot accepted (plaintext bytes).
    public static let defaultMaximumSnapshotByteCount = 64 << 20

    /// The largest snapshot `store` writes and `load` reads.
    public let maximumSnapshotByteCount: Int
    /// The snapshots directory, for messages.
    public let directoryPath: String

    private let directory: Int32
    private let keys: SessionKeyCache
    /// Upload keys whose file this process wrote or read intact: a store to them needs no look first.
    private let known = Mutex<Set<String>>([])

    /// Opens the vault of `stateDirectory`, creating the master key and `snapshots/` on first use.
    public convenience init(
        stateDirectory: UploadStateDirectory,
        maximumSnapshotByteCount: Int = SnapshotVault.defaultMaximumSnapshotByteCount
    ) throws(UploaderError) {
        try self.init(
            stateDirectory: stateDirectory, masterKey: try stateDirectory.masterKey(),
            maximumSnapshotByteCount: maximumSnapshotByteCount)
    }

    /// Opens the vault of `stateDirectory` with an explicit master key (tests use another key to show that
    /// nothing opens under it).
    init(
        stateDirectory: UploadStateDirectory, masterKey: SymmetricKey,
        maximumSnapshotByteCount: Int = SnapshotVault.defaultMaximumSnapshotByteCount
    ) throws(UploaderError) {
        guard maximumSnapshotByteCount > 0 else {
            throw UploaderError(.invalidArgument, "the largest snapshot must be at least one byte")
        }
        let parent = try stateDirectory.open()
        defer { AnchoredFiles.closeDescriptor(parent) }
        directory = try stateDirectory.openSubdirectory(Self.directoryName, in: parent)
        directoryPath = stateDirectory.path.appending(Self.directoryName).description
        keys = SessionKeyCache(master: masterKey, capacity: 4096)
        self.maximumSnapshotByteCount = maximumSnapshotByteCount
    }

    deinit { AnchoredFiles.closeDescriptor(directory) }

    /// The file that holds (or would hold) `key`'s snapshot, for messages.
    public func path(for key: String) -> String { directoryPath + "/" + SnapshotFormat.fileName(key: Array(key.utf8)) }

    /// The snapshot stored for `key`: absent, damaged (the file named, nothing changed) or the bytes. Throws only
    /// for a bad key (`.invalidArgument`) or a failed system call (`.systemCall`).
    public func load(key: String) throws(UploaderError) -> Loaded {
        let keyBytes = try Self.validated(key)
        let name = SnapshotFormat.fileName(key: keyBytes)
        let shown = directoryPath + "/" + name
        let bytes: [UInt8]
        switch try readFile(name, shown: shown) {
        case .absent: return .absent
        case .damaged(let reason): return .damaged(SnapshotDamage(reason: reason, path: shown))
        case .bytes(let read): bytes = read
        }
        let parsed: SnapshotFormat.Parsed
        switch SnapshotFormat.parse(bytes) {
        case .damaged(let reason): return .damaged(SnapshotDamage(reason: reason, path: shown))
        case .parsed(let value): parsed = value
        }
        guard parsed.key == keyBytes else { return .damaged(SnapshotDamage(reason: .wrongKey, path: shown)) }
        let plaintext: [UInt8]
        do {
            let sessionKey = try keys.key(for: key)
            plaintext = try AESGCM.open(
                parsed.sealed, authenticating: bytes[0..<parsed.headerByteCount],
                nonce: try AESGCM.Nonce(bytes: parsed.nonce), key: sessionKey)
        } catch {
            return .damaged(SnapshotDamage(reason: .authenticationFailed, path: shown))
        }
        known.withLock { _ = $0.insert(key) }
        return .snapshot(plaintext)
    }

    /// Stores `snapshot` for `key`, replacing the previous one atomically. A damaged file at that name is not
    /// replaced (`.snapshotDamaged` naming it) unless `replacingDamaged` is true; a directory, FIFO or link there
    /// is never replaced (remove it first).
    public func store(_ snapshot: [UInt8], for key: String, replacingDamaged: Bool = false) throws(UploaderError) {
        let keyBytes = try Self.validated(key)
        guard snapshot.count <= maximumSnapshotByteCount else {
            throw UploaderError(
                .invalidArgument, "a snapshot is at most \(maximumSnapshotByteCount) bytes, got \(snapshot.count)")
        }
        if !known.withLock({ $0.contains(key) }), case .damaged(let damage) = try load(key: key) {
            guard replacingDamaged, damage.reason != .notARegularFile else { throw damage.error }
        }
        let name = SnapshotFormat.fileName(key: keyBytes)
        let header = SnapshotFormat.header(key: keyBytes)
        let nonce = AESGCM.Nonce()
        let sealed: [UInt8]
        do {
            sealed = try AESGCM.seal(snapshot, authenticating: header, nonce: nonce, key: try keys.key(for: key))
        } catch {
            throw UploaderError(.systemCall, "could not seal the snapshot for \(path(for: key)): \(error.message)")
        }
        do {
            try AtomicFile.write(
                header + nonce.bytes + sealed, named: name, inDirectory: directory, directoryPath: directoryPath,
                options: .secret)
        } catch {
            throw UploaderError(
                .systemCall, "could not write the snapshot \(path(for: key)): \(error.message)", errno: error.errno)
        }
        known.withLock { _ = $0.insert(key) }
    }

    /// Removes `key`'s snapshot, whatever its state (a finished upload, or the caller's decision about a damaged
    /// one); false when there was none.
    @discardableResult
    public func remove(key: String) throws(UploaderError) -> Bool {
        let keyBytes = try Self.validated(key)
        let name = SnapshotFormat.fileName(key: keyBytes)
        known.withLock { _ = $0.remove(key) }
        do {
            try AnchoredFiles.unlink(directory: directory, FilePath(name))
        } catch  where error == .noEntry {
            return false
        } catch {
            throw UploadStateDirectory.failure("remove", directoryPath + "/" + name, error)
        }
        do { try AnchoredFiles.synchronize(directory) } catch {
            throw UploadStateDirectory.failure("sync", directoryPath, error)
        }
        keys.remove(sessionID: key)
        return true
    }

    /// The upload keys the vault holds, and the snapshot files that are damaged. Only the framing and the name
    /// are checked here (no key is derived); `load` authenticates.
    public func list() throws(UploaderError) -> Listing {
        let names: [String]
        do {
            // Snapshot names are ASCII; any other name is not one of ours and is skipped.
            names = try Syscall.directoryEntries(descriptor: directory, path: directoryPath).compactMap {
                String(validating: $0.bytes, as: UTF8.self)
            }
        } catch {
            throw UploaderError(.systemCall, "could not list \(directoryPath): \(error.message)", errno: error.errno)
        }
        var listing = Listing(keys: [], damaged: [])
        for name in names.sorted() where SnapshotFormat.isFileName(name) {
            let shown = directoryPath + "/" + name
            switch try readFile(name, shown: shown) {
            case .absent: continue
            case .damaged(let reason): listing.damaged.append(SnapshotDamage(reason: reason, path: shown))
            case .bytes(let bytes):
                switch SnapshotFormat.parse(bytes) {
                case .damaged(let reason): listing.damaged.append(SnapshotDamage(reason: reason, path: shown))
                case .parsed(let parsed):
                    guard SnapshotFormat.fileName(key: parsed.key) == name,
                        let key = String(validating: parsed.key, as: UTF8.self)
                    else {
                        listing.damaged.append(SnapshotDamage(reason: .wrongKey, path: shown))
                        continue
                    }
                    listing.keys.append(key)
                }
            }
        }
        listing.keys.sort()
        return listing
    }

    // MARK: Reading

    private enum FileRead {
        case absent
        case damaged(SnapshotDamage.Reason)
        case bytes([UInt8])
    }

    /// Reads `name` the careful way: never through a link, never blocking on a FIFO, judged by what was opened.
    private func readFile(_ name: String, shown: String) throws(UploaderError) -> FileRead {
        let largest =
            SnapshotFormat.header(key: [UInt8](repeating: 0, count: SnapshotFormat.maximumKeyByteCount))
            .count + SnapshotFormat.nonceByteCount + SnapshotFormat.tagByteCount + maximumSnapshotByteCount
        let fd: Int32
        do {
            fd = try AnchoredFiles.openForReading(directory: directory, FilePath(name))
        } catch  where error == .noEntry {
            return .absent
        } catch  where error == .symbolicLink {
            return .damaged(.notARegularFile)
        } catch {
            throw UploadStateDirectory.failure("open", shown, error)
        }
        defer { AnchoredFiles.closeDescriptor(fd) }
        let status: FileStatus
        do { status = try AnchoredFiles.status(fd) } catch { throw UploadStateDirectory.failure("stat", shown, error) }
        guard status.isRegularFile else { return .damaged(.notARegularFile) }
        guard status.ownerID == AnchoredFiles.effectiveUserID() else { return .damaged(.wrongOwner) }
        guard status.permissions == 0o600 else { return .damaged(.wrongMode) }
        guard status.size <= largest else { return .damaged(.tooLarge) }
        // One byte more than the file's size, to see a file that grew after the fstat.
        var bytes = [UInt8](repeating: 0, count: Int(status.size) + 1)
        let count: Int
        do {
            count = try unsafe bytes.withUnsafeMutableBytes { (raw) throws(AnchoredFiles.Errno) in
                try unsafe AnchoredFiles.readFully(fd, into: raw)
            }
        } catch {
            throw UploadStateDirectory.failure("read", shown, error)
        }
        guard count <= largest else { return .damaged(.tooLarge) }
        bytes.removeLast(bytes.count - count)
        return .bytes(bytes)
    }

    private static func validated(_ key: String) throws(UploaderError) -> [UInt8] {
        let bytes = Array(key.utf8)
        guard (1...SnapshotFormat.maximumKeyByteCount).contains(bytes.count) else {
            throw UploaderError(
                .invalidArgument, "an upload key is 1...\(SnapshotFormat.maximumKeyByteCount) UTF-8 bytes")
        }
        return bytes
    }
}
