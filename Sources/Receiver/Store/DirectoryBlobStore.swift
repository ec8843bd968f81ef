public import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// The embedded blob store: plain files under one directory.
///
/// ```
/// root/chunks/<id>/<index>        native chunks of older stores, one file each (recovery moves them into the stream)
/// root/parity/<id>/<group>.<shard> parity shards
/// root/streams/<id>               IETF/tus byte streams, appended in place; native uploads' chunks, each
///                                 written in place at index * chunkSize
/// root/objects/<id>               completed objects (plain files)
/// root/staging/                   temporary files; committed by rename into place
/// ```
/// Every commit is fsync of the file, rename, fsync of the directory; keys are validated `UploadID`s and
/// integers, so no name from a request reaches a path unchecked.
public struct DirectoryBlobStore: BlobStore {
    /// The store's root directory.
    public let root: FilePath

    /// Opens (creating when missing) a store at `root`.
    public init(root: FilePath) throws(ReceiverError) {
        self.root = root
        try Self.makeDirectory(root)
        for name in ["chunks", "parity", "streams", "objects", "staging"] {
            try Self.makeDirectory(root.appending(name))
        }
        try Self.storage { () throws(IOError) in try Syscall.syncDirectory(root) }
    }

    // MARK: BlobStore

    public func stage(_ key: BlobKey) throws(ReceiverError) -> any BlobWriter {
        let name = Hex.encode(SecureRandom.bytes(16)) + ".tmp"
        let temporary = root.appending("staging").appending(name)
        let descriptor = try Self.storage { () throws(IOError) in
            try Syscall.open(temporary, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o640)
        }
        return StagedBlobWriter(
            descriptor: descriptor, temporary: temporary, target: path(of: key), directory: directory(of: key),
            parentOfDirectory: parentOfDirectory(of: key))
    }

    public func append(to key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter {
        guard case .stream = key else { throw ReceiverError(.malformedRequest, "only a stream is appended to") }
        let target = path(of: key)
        let descriptor = try Self.storage { () throws(IOError) in
            try Syscall.open(target, flags: O_WRONLY | O_CREAT | O_NOFOLLOW, mode: 0o640)
        }
        do throws(ReceiverError) {
            try Self.storage { () throws(IOError) in
                let status = try Syscall.fstat(descriptor, path: target.description)
                guard status.size >= offset else {
                    throw IOError(.unexpectedEndOfFile, "the stream is shorter than its recorded offset")
                }
                if status.size > offset { try Syscall.ftruncate(descriptor, length: offset, path: target.description) }
                if offset == 0 { try Syscall.syncDirectory(root.appending("streams")) }
            }
        } catch {
            Syscall.close(descriptor)
            throw error
        }
        return PlacedBlobWriter(descriptor: descriptor, path: target, kind: .append, offset: offset)
    }

    public func place(into key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter {
        try place(into: key, at: offset, keeping: 0)
    }

    /// Regions are written in place with `pwrite`: what was made durable stays where it is when the writer is let go.
    public var keepsCutPrefixes: Bool { true }

    public func place(into key: BlobKey, at offset: Int64, keeping kept: Int64) throws(ReceiverError)
        -> any BlobWriter
    {
        guard case .stream = key, offset >= 0, kept >= 0 else {
            throw ReceiverError(.malformedRequest, "only a stream is written in place")
        }
        let target = path(of: key)
        let descriptor = try Self.storage { () throws(IOError) in
            try Syscall.open(target, flags: O_WRONLY | O_CREAT | O_NOFOLLOW, mode: 0o640)
        }
        return PlacedBlobWriter(
            descriptor: descriptor, path: target, kind: .region(directory: directory(of: key)), offset: offset,
            kept: kept)
    }

    public func reserve(_ key: BlobKey, size: Int64) throws(ReceiverError) {
        guard case .stream = key, size >= 0 else { throw ReceiverError(.malformedRequest, "only a stream is reserved") }
        let target = path(of: key)
        try Self.storage { () throws(IOError) in
            let descriptor = try Syscall.open(target, flags: O_WRONLY | O_CREAT | O_NOFOLLOW, mode: 0o640)
            defer { Syscall.close(descriptor) }
            if try Syscall.fstat(descriptor, path: target.description).size == 0, size > 0 {
                try Syscall.ftruncate(descriptor, length: size, path: target.description)
            }
            try Syscall.fsync(descriptor, path: target.description)
            try Syscall.syncDirectory(directory(of: key))
        }
    }

    public func read(_ key: BlobKey, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(ReceiverError)
        -> Int
    {
        let target = path(of: key)
        return try Self.storage { () throws(IOError) -> Int in
            let descriptor = try Syscall.openReadOnly(target)
            defer { Syscall.close(descriptor) }
            return try unsafe Syscall.preadFully(descriptor, into: buffer, offset: offset, path: target.description)
        }
    }

    /// The blob mapped read-only (mmap) and handed out in pieces straight from the page cache: completion hashes
    /// and copies a 1 GiB object with one copy instead of two (pread into a buffer, then write). Committed chunk,
    /// shard and object files are only ever replaced by rename, never shortened in place, so the mapping stays
    /// whole while it is read.
    public func forEachPiece(
        of key: BlobKey, pieceSize: Int, _ body: (UnsafeRawBufferPointer) throws(ReceiverError) -> Void
    ) throws(ReceiverError) {
        let target = path(of: key)
        let descriptor = try Self.storage { () throws(IOError) in try Syscall.openReadOnly(target) }
        defer { Syscall.close(descriptor) }
        let size = try Self.storage { () throws(IOError) in try Syscall.fstat(descriptor, path: target.description).size
        }
        guard size > 0 else { return }
        guard let length = Int(exactly: size) else { throw ReceiverError(.storageFailed, "\(key) is too large to map") }
        let region = try unsafe Self.storage { () throws(IOError) in
            try unsafe Syscall.mapPrivate(descriptor, offset: 0, length: length, path: target.description)
        }
        defer { unsafe Syscall.unmap(region) }
        let step = max(pieceSize, 1)
        var offset = 0
        while offset < length {
            let end = offset + min(step, length - offset)
            try unsafe body(UnsafeRawBufferPointer(rebasing: region[offset..<end]))
            offset = end
        }
    }

    public func size(of key: BlobKey) throws(ReceiverError) -> Int64? {
        do {
            return try Syscall.stat(path(of: key)).size
        } catch {
            if error.errno == ENOENT { return nil }
            throw Self.storageError(error)
        }
    }

    public func promote(_ from: BlobKey, to: BlobKey) throws(ReceiverError) {
        try Self.storage { () throws(IOError) in
            try Syscall.rename(path(of: from), to: path(of: to))
            try Syscall.syncDirectory(directory(of: to))
            try Syscall.syncDirectory(directory(of: from))
        }
    }

    public func alias(_ existing: BlobKey, as alias: BlobKey) throws(ReceiverError) {
        let source = path(of: existing)
        let target = path(of: alias)
        try Self.storage { () throws(IOError) in
            _ = try Syscall.retryingEINTR("link", path: target.description) {
                unsafe source.withCString { from in unsafe target.withCString { unsafe Glibc.link(from, $0) } }
            }
            try Syscall.syncDirectory(directory(of: alias))
        }
    }

    public func delete(_ key: BlobKey) throws(ReceiverError) {
        try Self.removeIfPresent(path(of: key))
        // The last chunk file of an upload takes its folder with it (chunks are written into the stream now).
        if case .chunk = key { try? Syscall.rmdir(directory(of: key)) }
    }

    public func deleteWorkingBlobs(of upload: UploadID) throws(ReceiverError) {
        try Self.removeIfPresent(path(of: .stream(upload)))
        for area in ["chunks", "parity"] {
            let folder = root.appending(area).appending(upload.rawValue)
            for name in try Self.entries(of: folder) { try Self.removeIfPresent(folder.appending(name)) }
            do {
                try Syscall.rmdir(folder)
            } catch {
                if error.errno != ENOENT {
                    throw Self.storageError(error)
                }
            }
        }
    }

    public func keys() throws(ReceiverError) -> [BlobKey] {
        var keys: [BlobKey] = []
        for name in try Self.entries(of: root.appending("streams")) {
            if let id = try? UploadID(name) { keys.append(.stream(id)) }
        }
        for name in try Self.entries(of: root.appending("objects")) {
            if let id = try? UploadID(name) { keys.append(.object(id)) }
        }
        for name in try Self.entries(of: root.appending("chunks")) {
            guard let id = try? UploadID(name) else { continue }
            for entry in try Self.entries(of: root.appending("chunks").appending(name)) {
                if let index = Self.decimal(entry) { keys.append(.chunk(id, index: index)) }
            }
        }
        for name in try Self.entries(of: root.appending("parity")) {
            guard let id = try? UploadID(name) else { continue }
            for entry in try Self.entries(of: root.appending("parity").appending(name)) {
                let parts = entry.split(separator: ".", omittingEmptySubsequences: false)
                if parts.count == 2, let group = Self.decimal(parts[0]), let shard = Self.decimal(parts[1]) {
                    keys.append(.parity(id, group: group, shard: shard))
                }
            }
        }
        return keys
    }

    public func discardStaging() throws(ReceiverError) -> Int {
        let staging = root.appending("staging")
        // Only the names `stage` gives (32 hex digits and `.tmp`): anything else there is not this store's, and
        // is left as it is rather than failing the start (a directory could not be unlinked anyway).
        let names = try Self.entries(of: staging).filter(Self.isStagedName)
        for name in names { try Self.removeIfPresent(staging.appending(name)) }
        return names.count
    }

    // MARK: Paths

    /// The file of `key` (for tests that play a crash by damaging files).
    public func path(of key: BlobKey) -> FilePath {
        switch key {
        case .chunk(let id, let index): root.appending("chunks").appending(id.rawValue).appending(String(index))
        case .parity(let id, let group, let shard):
            root.appending("parity").appending(id.rawValue).appending("\(group).\(shard)")
        case .stream(let id): root.appending("streams").appending(id.rawValue)
        case .object(let id): root.appending("objects").appending(id.rawValue)
        }
    }

    private func directory(of key: BlobKey) -> FilePath { path(of: key).directory }

    /// The directory holding `key`'s directory, when that one is per upload (created on first use).
    private func parentOfDirectory(of key: BlobKey) -> FilePath? {
        switch key {
        case .chunk, .parity: directory(of: key).directory
        case .stream, .object: nil
        }
    }

    // MARK: Helpers

    /// The receiver's error for a failed storage call: out of descriptors or memory is `.unavailable` (503, the
    /// client retries later); anything else (no space, I/O error, a path that is not a directory) is
    /// `.storageFailed` (507). The message names the call, the cause and the path.
    static func storageError(_ error: IOError) -> ReceiverError {
        let message = "storage failed: \(error.message)\(error.path.map { " (\($0))" } ?? "")"
        switch error.errno {
        case EMFILE, ENFILE, ENOMEM, EAGAIN: return ReceiverError(.unavailable, message, errno: error.errno)
        default: return ReceiverError(.storageFailed, message, errno: error.errno)
        }
    }

    static func storage<T>(_ body: () throws(IOError) -> T) throws(ReceiverError) -> T {
        do {
            return try body()
        } catch {
            throw Self.storageError(error)
        }
    }

    /// Creates the directory `path` (0750) unless it exists; something else in its place (a file, a FIFO) is named,
    /// with ENOTDIR.
    static func makeDirectory(_ path: FilePath) throws(ReceiverError) {
        do {
            try Syscall.mkdir(path, mode: 0o750)
        } catch {
            if error.errno != EEXIST {
                throw Self.storageError(error)
            }
            // Something is there already: it must be a directory (a file or FIFO in its place is named).
            if let status = try? Syscall.stat(path), !status.isDirectory {
                throw ReceiverError(
                    .storageFailed, "the store directory \(path) is \(status.kindName), not a directory",
                    errno: ENOTDIR)
            }
        }
    }

    private static func removeIfPresent(_ path: FilePath) throws(ReceiverError) {
        do {
            try Syscall.unlink(path)
        } catch {
            if error.errno != ENOENT {
                throw Self.storageError(error)
            }
        }
    }

    private static func entries(of directory: FilePath) throws(ReceiverError) -> [String] {
        do {
            // Names this store writes are ASCII; anything else is not one of its blobs and is skipped.
            return try Syscall.directoryEntries(directory).filter(\.isValidUTF8).map(\.description)
        } catch {
            if error.errno == ENOENT { return [] }
            throw Self.storageError(error)
        }
    }

    /// Whether `name` is one `stage` gives: 32 lower-case hex digits and `.tmp`.
    static func isStagedName(_ name: String) -> Bool {
        name.utf8.count == 36 && name.hasSuffix(".tmp")
            && name.utf8.prefix(32).allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    private static func decimal(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.count <= 10, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            text == "0" || !text.hasPrefix("0")
        else { return nil }
        return Int(text)
    }

    static func ensureDirectory(_ path: FilePath, parent: FilePath) throws(ReceiverError) {
        do {
            try Syscall.mkdir(path, mode: 0o750)
            try Syscall.syncDirectory(parent)
        } catch {
            if error.errno != EEXIST {
                throw Self.storageError(error)
            }
        }
    }
}

/// A staged blob: a temporary file in `staging/`, renamed into place by `commit()`.
final class StagedBlobWriter: BlobWriter {
    private var descriptor: Int32
    private let temporary: FilePath
    private let target: FilePath
    private let directory: FilePath
    private let parentOfDirectory: FilePath?
    private var synced = false
    private(set) var bytesWritten: Int64 = 0

    init(descriptor: Int32, temporary: FilePath, target: FilePath, directory: FilePath, parentOfDirectory: FilePath?) {
        self.descriptor = descriptor
        self.temporary = temporary
        self.target = target
        self.directory = directory
        self.parentOfDirectory = parentOfDirectory
    }

    deinit { discard() }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ReceiverError) {
        guard descriptor >= 0 else { throw ReceiverError(.storageFailed, "the staged blob was closed") }
        try DirectoryBlobStore.storage { () throws(IOError) in
            try unsafe Syscall.writeFully(descriptor, from: bytes, path: temporary.description)
        }
        bytesWritten += Int64(bytes.count)
        synced = false
    }

    func durable() throws(ReceiverError) {
        guard descriptor >= 0 else { throw ReceiverError(.storageFailed, "the staged blob was closed") }
        if synced { return }
        try DirectoryBlobStore.storage { () throws(IOError) in
            try Syscall.fsync(descriptor, path: temporary.description)
        }
        synced = true
    }

    func commit() throws(ReceiverError) {
        try durable()
        if let parentOfDirectory { try DirectoryBlobStore.ensureDirectory(directory, parent: parentOfDirectory) }
        try DirectoryBlobStore.storage { () throws(IOError) in
            try Syscall.rename(temporary, to: target)
        }
        Syscall.close(descriptor)
        descriptor = -1
        try DirectoryBlobStore.storage { () throws(IOError) in try Syscall.syncDirectory(directory) }
    }

    func discard() {
        guard descriptor >= 0 else { return }
        Syscall.close(descriptor)
        descriptor = -1
        try? Syscall.unlink(temporary)
    }
}
