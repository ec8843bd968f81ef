import AetherIO
import AetherSecurity
import AetherTransport
import Foundation
import Glibc
import Synchronization

/// The files of a capture already uploaded and verified: `captures/KEY.journal` in the state directory, one line
/// per finished file, appended and fsynced before the file counts as done, so a crash at any moment never makes a
/// finished file go again (a kill between the destination's receipt and the line costs that one file). Each line
/// is sealed (AES-GCM under a key derived with HKDF-SHA-256 from the state directory's master key and the capture's
/// key, the capture's key authenticated), then base64: the journal names files and where they went, as snapshots
/// do, and is kept as private. A damaged line (a torn last write, a changed byte) is skipped: its file is uploaded
/// again, never wrongly skipped. A rerun skips a file whose line has the same relative path, size, modification
/// time, status change time, inode and device.
final class CaptureJournal: Sendable {
    /// One finished file.
    struct Entry: Codable, Sendable, Hashable {
        /// The relative path, base64 (bytes, not text).
        var path: String
        var size: Int64
        var modified: Int64
        var changed: Int64
        var inode: UInt64
        var device: UInt64
        var sha256: String
        var merkleRoot: String
        var location: String

        init(_ file: CaptureFile, outcome: UploadOutcome) {
            path = Data(file.relativePath).base64EncodedString()
            size = file.size
            modified = file.modificationNanoseconds
            changed = file.changeNanoseconds
            inode = file.inode
            device = file.device
            sha256 = outcome.sha256.hex
            merkleRoot = outcome.merkleRoot.hex
            location = outcome.receipt.location
        }

        /// Whether `file` has the fingerprint this entry recorded (the journal finds the entry by the file's name).
        func matches(_ file: CaptureFile) -> Bool {
            size == file.size && modified == file.modificationNanoseconds && changed == file.changeNanoseconds
                && inode == file.inode && device == file.device
        }
    }

    private let descriptor: Mutex<Int32>
    private let sealing: SymmetricKey
    private let authenticated: [UInt8]
    private let shown: String
    /// Entries found when the journal was opened, by relative path (a later line wins).
    let done: [[UInt8]: Entry]

    /// The most a journal may hold (about 400 bytes a file: a million files).
    static let maximumBytes = 512 << 20

    /// Opens (creating) the journal of capture `key` in `state` and reads what it holds.
    init(state: UploadStateDirectory, key: String) throws(UploaderError) {
        do {
            sealing = try HKDF.deriveKey(
                inputKeyMaterial: try state.masterKey(), salt: Array("aether-capture-journal-v1".utf8),
                info: Array(key.utf8))
        } catch let error as UploaderError {
            throw error
        } catch {
            throw UploaderError(.systemCall, "the capture journal's key could not be derived")
        }
        authenticated = Array(key.utf8)
        let root = try state.open()
        defer { AnchoredFiles.closeDescriptor(root) }
        let directory = try state.openSubdirectory("captures", in: root)
        defer { AnchoredFiles.closeDescriptor(directory) }
        shown = state.path.appending("captures").appending(key + ".journal").description
        let fd: Int32
        var held: [UInt8]
        do {
            fd = try Syscall.openat(
                directory, key + ".journal", flags: O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, mode: 0o600,
                path: shown)
            let status = try Syscall.fstat(fd, path: shown)
            guard status.isRegularFile else {
                Syscall.close(fd)
                throw UploaderError(.stateDirectoryRefused, "\(shown) is \(status.kindName), not a regular file")
            }
            held = try Syscall.readAll(fd, limit: Self.maximumBytes + 1, path: shown)
            guard held.count <= Self.maximumBytes else {
                Syscall.close(fd)
                throw UploaderError(
                    .snapshotUnavailable,
                    "the capture journal \(shown) holds more than \(Self.maximumBytes >> 20) MiB; remove it to start the "
                        + "capture afresh (finished files are then checked by the destination's dedup)")
            }
            // A torn last line gets its end, so the next line starts clean (the torn one is skipped).
            if let last = held.last, last != 0x0A { try Syscall.writeFully(fd, [0x0A], path: shown) }
        } catch let error as UploaderError {
            throw error
        } catch {
            throw UploaderError(.systemCall, "the capture journal \(shown) could not be opened: \(error)")
        }
        descriptor = Mutex(fd)
        var done: [[UInt8]: Entry] = [:]
        let decoder = JSONDecoder()
        for line in held.split(separator: 0x0A) {
            guard let sealed = Data(base64Encoded: Data(line)),
                let plain = try? AESGCM.openCombined(Array(sealed), authenticating: authenticated, key: sealing),
                let entry = try? decoder.decode(Entry.self, from: Data(plain)),
                let path = Data(base64Encoded: entry.path)
            else { continue }
            done[Array(path)] = entry
        }
        self.done = done
        held = []
    }

    deinit { descriptor.withLock { Syscall.close($0) } }

    /// Whether `file` was uploaded, unchanged, by an earlier run; its entry then.
    func finished(_ file: CaptureFile) -> Entry? {
        guard let entry = done[file.relativePath], entry.matches(file) else { return nil }
        return entry
    }

    /// Appends a finished file's line and makes it durable.
    func record(_ entry: Entry) throws(UploaderError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let line: [UInt8]
        do {
            let sealed = try AESGCM.sealCombined(
                Array(try encoder.encode(entry)), authenticating: authenticated, key: sealing)
            line = Array(Data(sealed).base64EncodedString().utf8) + [0x0A]
        } catch {
            throw UploaderError(.invalidArgument, "the capture journal's line could not be sealed")
        }
        try descriptor.withLock { fd throws(UploaderError) in
            do throws(IOError) {
                try Syscall.writeFully(fd, line, path: shown)
                try Syscall.fsync(fd, path: shown)
            } catch {
                throw UploaderError(
                    .systemCall, "could not write the capture journal \(shown): \(error.message)", errno: error.errno)
            }
        }
    }
}
