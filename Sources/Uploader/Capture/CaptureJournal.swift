import AetherIO
import AetherIntegrity
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
            self.init(file, sha256: outcome.sha256, merkleRoot: outcome.merkleRoot, location: outcome.receipt.location)
        }

        init(_ file: CaptureFile, sha256: Digest32, merkleRoot: Digest32, location: String) {
            path = Data(file.relativePath).base64EncodedString()
            size = file.size
            modified = file.modificationNanoseconds
            changed = file.changeNanoseconds
            inode = file.inode
            device = file.device
            self.sha256 = sha256.hex
            self.merkleRoot = merkleRoot.hex
            self.location = location
        }

        /// Whether `file` has the fingerprint this entry recorded (the journal finds the entry by the file's name).
        func matches(_ file: CaptureFile) -> Bool {
            size == file.size && modified == file.modificationNanoseconds && changed == file.changeNanoseconds
                && inode == file.inode && device == file.device
        }
    }

    /// The journal's first line: which folder goes where (for `aether status`); a journal of before it has none.
    struct Header: Codable, Sendable, Hashable {
        /// The folder's canonical path, base64 (bytes, not text).
        var capture: String
        var destination: String
    }

    private let descriptor: Mutex<Int32>
    private let sealing: SymmetricKey
    private let authenticated: [UInt8]
    private let shown: String
    /// Entries found when the journal was opened, by relative path (a later line wins).
    let done: [[UInt8]: Entry]
    /// The header found when the journal was opened.
    let header: Header?

    /// The most a journal may hold (about 400 bytes a file: a million files).
    static let maximumBytes = 512 << 20

    /// Opens (creating) the journal of capture `key` in `state` and reads what it holds.
    init(state: UploadStateDirectory, key: String) throws(UploaderError) {
        sealing = try Self.sealingKey(state.masterKey(), key: key)
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
        (header, done) = Self.read(held, key: key, sealing: sealing)
        held = []
    }

    /// The key that seals capture `key`'s lines.
    private static func sealingKey(_ master: SymmetricKey, key: String) throws(UploaderError) -> SymmetricKey {
        do {
            return try HKDF.deriveKey(
                inputKeyMaterial: master, salt: Array("aether-capture-journal-v1".utf8), info: Array(key.utf8))
        } catch {
            throw UploaderError(.systemCall, "the capture journal's key could not be derived")
        }
    }

    /// The header and the entries of a journal's bytes; lines that do not open (torn, changed) are skipped.
    private static func read(_ held: [UInt8], key: String, sealing: SymmetricKey) -> (Header?, [[UInt8]: Entry]) {
        var done: [[UInt8]: Entry] = [:]
        var header: Header?
        let decoder = JSONDecoder()
        for line in held.split(separator: 0x0A) {
            guard let sealed = Data(base64Encoded: Data(line)),
                let plain = try? AESGCM.openCombined(Array(sealed), authenticating: Array(key.utf8), key: sealing)
            else { continue }
            if let entry = try? decoder.decode(Entry.self, from: Data(plain)),
                let path = Data(base64Encoded: entry.path)
            {
                done[Array(path)] = entry
            } else if header == nil, let found = try? decoder.decode(Header.self, from: Data(plain)) {
                header = found
            }
        }
        return (header, done)
    }

    /// Writes the header once (a journal opened without one): the folder and the destination.
    func describe(capture: FilePath, destination: String) throws(UploaderError) {
        guard header == nil else { return }
        try append(Header(capture: Data(capture.bytes).base64EncodedString(), destination: destination))
    }

    /// What the state directory's capture journals hold, by capture key, read without taking a capture's lock
    /// (a running capture's journal shows the files finished so far). Unreadable journals are left out.
    static func kept(in state: UploadStateDirectory) throws(UploaderError) -> [CaptureStatus] {
        let root = try state.open()
        defer { AnchoredFiles.closeDescriptor(root) }
        let directory = try state.openSubdirectory("captures", in: root)
        defer { AnchoredFiles.closeDescriptor(directory) }
        let shownDirectory = state.path.appending("captures").description
        let names: [FilePath]
        do {
            names = try Syscall.directoryEntries(descriptor: directory, path: shownDirectory)
        } catch {
            throw UploaderError(.systemCall, "\(shownDirectory) cannot be listed: \(error.message)", errno: error.errno)
        }
        let master = try state.masterKey()
        var kept: [CaptureStatus] = []
        for name in names {
            let text = name.description
            guard text.hasSuffix(".journal") else { continue }
            let key = String(text.dropLast(".journal".count))
            let shown = shownDirectory + "/" + text
            guard
                let fd = try? Syscall.openat(
                    directory, text, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK, mode: 0, path: shown)
            else { continue }
            defer { Syscall.close(fd) }
            // A journal over the limit is refused by the capture itself; it is not read here either.
            guard let status = try? Syscall.fstat(fd, path: shown), status.isRegularFile,
                status.size <= Int64(maximumBytes),
                let held = try? Syscall.readAll(fd, limit: maximumBytes, path: shown),
                let sealing = try? sealingKey(master, key: key)
            else { continue }
            var (header, done) = read(held, key: key, sealing: sealing)
            // The manifest is journaled under its name when stored at the destination; it is not one of the files.
            let manifest = done.removeValue(forKey: Array(CaptureManifest.name.utf8))
            kept.append(
                CaptureStatus(
                    key: key, manifest: manifest.map { _ in state.path.appending("captures").appending(key + ".json") },
                    directory: header.flatMap { Data(base64Encoded: $0.capture) }.flatMap {
                        try? FilePath(bytes: Array($0))
                    },
                    destination: header?.destination, filesDone: done.count,
                    bytesDone: done.values.reduce(0) { $0 + $1.size }))
        }
        return kept.sorted { $0.key < $1.key }
    }

    deinit { descriptor.withLock { Syscall.close($0) } }

    /// Whether `file` was uploaded, unchanged, by an earlier run; its entry then.
    func finished(_ file: CaptureFile) -> Entry? {
        guard let entry = done[file.relativePath], entry.matches(file) else { return nil }
        return entry
    }

    /// Appends a finished file's line and makes it durable.
    func record(_ entry: Entry) throws(UploaderError) { try append(entry) }

    /// Appends one sealed line and makes it durable.
    private func append(_ value: some Encodable) throws(UploaderError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let line: [UInt8]
        do {
            let sealed = try AESGCM.sealCombined(
                Array(try encoder.encode(value)), authenticating: authenticated, key: sealing)
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
