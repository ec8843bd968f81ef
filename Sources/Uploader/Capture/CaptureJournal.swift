import AetherIO
import AetherTransport
import Foundation
import Synchronization

/// The files of a capture already uploaded and verified, kept in the state directory's snapshot vault (encrypted
/// and authenticated like a snapshot, each record written atomically) under `capture:KEY:N`, N = 0, 1, 2 ... A
/// rerun skips a file whose entry has the same relative path, size, modification time, inode and device; a file
/// changed since is uploaded again. Completed files are written in batches (at most 256 entries, or 0.5 s, or
/// 64 MiB of files, whichever comes first, and at the end): a crash loses at most the last batch, whose files
/// are then uploaded again (the destination's dedup or the resume snapshot makes that cheap), never a wrong skip.
final class CaptureJournal: Sendable {
    /// One finished file.
    struct Entry: Codable, Sendable, Hashable {
        /// The relative path, base64 (bytes, not text).
        var path: String
        var size: Int64
        var modified: Int64
        var inode: UInt64
        var device: UInt64
        var sha256: String
        var merkleRoot: String
        var location: String

        init(_ file: CaptureFile, outcome: UploadOutcome) {
            path = Data(file.relativePath).base64EncodedString()
            size = file.size
            modified = file.modificationNanoseconds
            inode = file.inode
            device = file.device
            sha256 = outcome.sha256.hex
            merkleRoot = outcome.merkleRoot.hex
            location = outcome.receipt.location
        }

        /// Whether `file` is the file this entry recorded (same name and fingerprint).
        func matches(_ file: CaptureFile) -> Bool {
            size == file.size && modified == file.modificationNanoseconds && inode == file.inode
                && device == file.device && Data(base64Encoded: path).map(Array.init) == file.relativePath
        }
    }

    private struct Pending {
        var entries: [Entry] = []
        var bytes: Int64 = 0
        var since = ContinuousClock.now
        var next = 0
    }

    private let vault: SnapshotVault
    private let key: String
    /// Entries found by `load`, by relative path.
    let done: [[UInt8]: Entry]
    private let pending: Mutex<Pending>

    static let prefix = "capture:"
    static let batchEntries = 256
    static let batchBytes: Int64 = 64 << 20
    static let batchSeconds = 0.5

    /// Opens the journal of capture `key` in `vault` and reads what it holds; damaged records are skipped (their
    /// files are uploaded again).
    init(vault: SnapshotVault, key: String) throws(UploaderError) {
        self.vault = vault
        self.key = key
        var done: [[UInt8]: Entry] = [:]
        var index = 0
        let decoder = JSONDecoder()
        while true {
            let loaded = try vault.load(key: Self.recordKey(key, index))
            guard case .absent = loaded else {
                if case .snapshot(let bytes) = loaded,
                    let entries = try? decoder.decode([Entry].self, from: Data(bytes))
                {
                    for entry in entries {
                        if let path = Data(base64Encoded: entry.path) { done[Array(path)] = entry }
                    }
                }
                index += 1
                continue
            }
            break
        }
        self.done = done
        pending = Mutex(Pending(next: index))
    }

    static func recordKey(_ key: String, _ index: Int) -> String { prefix + key + ":" + String(index) }

    /// Whether `file` was uploaded, unchanged, by an earlier run; its entry then.
    func finished(_ file: CaptureFile) -> Entry? {
        guard let entry = done[file.relativePath], entry.matches(file) else { return nil }
        return entry
    }

    /// Records a finished file; writes a batch when one is due.
    func record(_ entry: Entry) throws(UploaderError) {
        let batch: (entries: [Entry], index: Int)? = pending.withLock { pending in
            pending.entries.append(entry)
            pending.bytes += entry.size
            let due =
                pending.entries.count >= Self.batchEntries || pending.bytes >= Self.batchBytes
                || pending.since.duration(to: .now) >= .seconds(Self.batchSeconds)
            return due ? Self.take(&pending) : nil
        }
        if let batch { try write(batch.entries, index: batch.index) }
    }

    /// Writes what is pending.
    func flush() throws(UploaderError) {
        let batch = pending.withLock { pending in pending.entries.isEmpty ? nil : Self.take(&pending) }
        if let batch { try write(batch.entries, index: batch.index) }
    }

    private static func take(_ pending: inout Pending) -> (entries: [Entry], index: Int) {
        defer {
            pending.entries = []
            pending.bytes = 0
            pending.since = .now
            pending.next += 1
        }
        return (pending.entries, pending.next)
    }

    private func write(_ entries: [Entry], index: Int) throws(UploaderError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let bytes: Data
        do { bytes = try encoder.encode(entries) } catch {
            throw UploaderError(.invalidArgument, "the capture journal could not be encoded")
        }
        try vault.store(Array(bytes), for: Self.recordKey(key, index), replacingDamaged: true)
    }
}
