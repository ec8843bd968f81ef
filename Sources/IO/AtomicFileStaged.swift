#if canImport(Glibc)
    import Glibc
#endif

extension AtomicFile {
    /// The streaming form of the one atomic writer, for an output too large to hold in memory (a rebuilt
    /// file): a temporary file beside the target, written and read back at offsets, then committed.
    ///
    /// It is created exactly as the buffer form creates its temporary file (`O_CREAT | O_EXCL | O_NOFOLLOW`,
    /// `.<prefix>.<16 hex digits>.tmp` from the CSPRNG, the mode rule and the checks of `Options`), and
    /// `commit()` is the buffer form's ending: fsync, rename over the target, fsync of the directory. Until
    /// then the target is untouched. Anything not committed is removed: `discard()`, any failed call (which
    /// also ends the staged file; a later call is `.invalidArgument`), or the end of its last reference.
    ///
    /// ```swift
    /// let staged = try AtomicFile.Staged(replacing: output)
    /// try staged.write(block, at: offset)
    /// guard try digest(of: staged) == expected else { throw ... }   // the target was never touched
    /// try staged.commit()
    /// ```
    public final class Staged {
        /// What the staged file is in.
        private enum State {
            /// Open for writes, reads and the commit.
            case open
            /// Renamed over the target.
            case committed
            /// Removed (by `discard()` or a failed call).
            case discarded
        }

        /// The target, for messages.
        public let targetPath: String
        /// The temporary file's path, for messages.
        public let temporaryPath: String
        private let name: FilePath
        private let temporary: FilePath
        private let directory: Int32
        private let ownsDirectory: Bool
        private let directoryPath: String
        private let options: Options
        private var descriptor: Int32
        private var state = State.open

        /// Stages a replacement of `path` (given as bytes, exactly as from `argv`).
        public convenience init(replacing path: FilePath, options: Options = Options()) throws(IOError) {
            let directory = path.directory
            let descriptor = try Syscall.open(directory, flags: O_RDONLY | O_DIRECTORY)
            try self.init(
                name: path.lastComponent, directory: descriptor, owned: true, directoryPath: directory.description,
                options: options)
        }

        /// Stages a replacement of the file `name` inside the open directory `directory`; every call is
        /// relative to it (a copy of the descriptor is kept, so the caller may close its own at any time).
        /// `directoryPath` only names the place in messages.
        public convenience init(
            named name: FilePath, inDirectory directory: Int32, directoryPath: String, options: Options = Options()
        ) throws(IOError) {
            let copy = try Syscall.retryingEINTR("fcntl", path: directoryPath) {
                fcntl(directory, F_DUPFD_CLOEXEC, Int32(0))
            }
            try self.init(name: name, directory: copy, owned: true, directoryPath: directoryPath, options: options)
        }

        /// The designated form: `directory` is closed on failure and in deinit when `owned`.
        init(
            name: FilePath, directory: Int32, owned: Bool, directoryPath: String, options: Options
        ) throws(IOError) {
            let target = directoryPath + "/" + name.description
            let created: (FilePath, Int32)
            do {
                created = try Self.createTemporary(
                    name: name, directory: directory, directoryPath: directoryPath, target: target, options: options)
            } catch {
                if owned { Syscall.close(directory) }
                throw error
            }
            self.name = name
            self.directory = directory
            self.ownsDirectory = owned
            self.directoryPath = directoryPath
            self.options = options
            self.targetPath = target
            (temporary, descriptor) = created
            temporaryPath = directoryPath + "/" + created.0.description
        }

        deinit {
            if state == .open { removeTemporary() }
            if ownsDirectory { Syscall.close(directory) }
        }

        /// Writes all of `bytes` at `offset` of the staged file.
        public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(IOError) {
            try checkOpen()
            try endingOnFailure { () throws(IOError) in
                if options.fault == .write {
                    // A full disk: half of it reaches the file.
                    try unsafe Syscall.pwriteFully(
                        descriptor, from: UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count / 2)]),
                        offset: offset, path: temporaryPath)
                    throw Syscall.failure("write", code: ENOSPC, path: temporaryPath)
                }
                try unsafe Syscall.pwriteFully(descriptor, from: bytes, offset: offset, path: temporaryPath)
            }
        }

        /// Writes all of `bytes` at `offset` of the staged file.
        public func write(_ bytes: some Collection<UInt8>, at offset: Int64) throws(IOError) {
            let array = Array(bytes)
            var failure: IOError?
            unsafe array.withUnsafeBytes { raw in
                do throws(IOError) { try unsafe write(raw, at: offset) } catch { failure = error }
            }
            if let failure { throw failure }
        }

        /// Reads what was staged at `offset`: up to `buffer.count` bytes, fewer only at the end of the file.
        public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> Int {
            try checkOpen()
            return try endingOnFailure { () throws(IOError) -> Int in
                try unsafe Syscall.preadFully(descriptor, into: buffer, offset: offset, path: temporaryPath)
            }
        }

        /// Sets the staged file's length (a longer file reads as zeros past the old end).
        public func truncate(to length: Int64) throws(IOError) {
            try checkOpen()
            try endingOnFailure { () throws(IOError) in
                try Syscall.ftruncate(descriptor, length: length, path: temporaryPath)
            }
        }

        /// Flushes the staged bytes to stable storage now (the commit does it in any case).
        public func sync() throws(IOError) {
            try checkOpen()
            try endingOnFailure { () throws(IOError) in try syncFile() }
        }

        /// Puts the staged file in place of the target: fsync, rename over the target, fsync of the directory.
        /// A failure before the rename leaves the target exactly as it was and removes the temporary file; a
        /// failure of the directory's fsync is reported with the new content already in place.
        public func commit() throws(IOError) {
            try checkOpen()
            try endingOnFailure { () throws(IOError) in
                if options.existing == .replaceOwnRegularFile {
                    // Checked again: the name may have been replaced while the file was staged.
                    _ = try Self.existingFile(named: name, in: directory, path: targetPath, options: options)
                }
                try syncFile()
                if options.fault == .rename { throw Syscall.failure("rename", code: EIO, path: targetPath) }
                _ = try Syscall.retryingEINTR("rename", path: targetPath) {
                    unsafe temporary.withCString { from in
                        unsafe name.withCString { to in unsafe renameat(directory, from, directory, to) }
                    }
                }
            }
            state = .committed
            closeDescriptor()
            // The new content is in place; the directory's fsync makes the rename itself durable.
            if options.fault == .directorySync { throw Syscall.failure("fsync", code: EIO, path: directoryPath) }
            try Syscall.fsync(directory, path: directoryPath)
        }

        /// Removes the staged file, leaving the target as it was. Nothing happens once committed or discarded.
        public func discard() {
            guard state == .open else { return }
            removeTemporary()
        }

        // MARK: Helpers

        private func checkOpen() throws(IOError) {
            switch state {
            case .open: return
            case .committed:
                throw IOError(.invalidArgument, "the staged file for \(targetPath) was committed", path: targetPath)
            case .discarded:
                throw IOError(
                    .invalidArgument, "the staged file for \(targetPath) was discarded (or a call on it failed)",
                    path: targetPath)
            }
        }

        /// Runs `body`; when it throws, the staged file is removed before the error goes on.
        private func endingOnFailure<T>(_ body: () throws(IOError) -> T) throws(IOError) -> T {
            do {
                return try body()
            } catch {
                removeTemporary()
                throw error
            }
        }

        private func syncFile() throws(IOError) {
            if options.fault == .fileSync { throw Syscall.failure("fsync", code: EIO, path: temporaryPath) }
            try Syscall.fsync(descriptor, path: temporaryPath)
        }

        private func removeTemporary() {
            closeDescriptor()
            // Best effort: the name is random and hidden, and the caller's error is what matters.
            _ = unsafe temporary.withCString { unsafe unlinkat(directory, $0, 0) }
            state = .discarded
        }

        private func closeDescriptor() {
            guard descriptor >= 0 else { return }
            Syscall.close(descriptor)
            descriptor = -1
        }

        /// Checks the name and what stands at it, then creates the temporary file with the mode `options` ask.
        private static func createTemporary(
            name: FilePath, directory: Int32, directoryPath: String, target: String, options: Options
        ) throws(IOError) -> (FilePath, Int32) {
            let slash = UInt8(ascii: "/")
            guard !name.isEmpty, !name.bytes.contains(slash), name != FilePath("."), name != FilePath("..") else {
                throw IOError(.invalidArgument, "not a file name: \(name)", path: target)
            }
            let existing = try existingFile(named: name, in: directory, path: target, options: options)
            let mode: UInt32
            let exact: Bool
            switch options.permissions {
            case .inherit:
                mode = existing.map { $0 & 0o7777 } ?? 0o666
                exact = existing != nil
            case .exactly(let bits):
                mode = bits & 0o7777
                exact = true
            case .umasked(let bits):
                mode = bits & 0o7777
                exact = false
            }
            let temporary = temporaryName(for: options.temporaryPrefix.map { FilePath($0) } ?? name)
            let temporaryPath = directoryPath + "/" + temporary.description
            let descriptor = try Syscall.retryingEINTR("open", path: temporaryPath) {
                unsafe temporary.withCString {
                    unsafe openat(directory, $0, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
                }
            }
            if exact {
                // The umask may have cleared bits the result must have.
                do {
                    _ = try Syscall.retryingEINTR("fchmod", path: temporaryPath) { fchmod(descriptor, mode_t(mode)) }
                } catch {
                    Syscall.close(descriptor)
                    _ = unsafe temporary.withCString { unsafe unlinkat(directory, $0, 0) }
                    throw error
                }
            }
            return (temporary, descriptor)
        }

        /// The mode of the regular file at `name` (nil when absent), after the checks `options.existing` asks for.
        private static func existingFile(
            named name: FilePath, in directory: Int32, path: String, options: Options
        ) throws(IOError) -> UInt32? {
            var status = Glibc.stat()
            guard unsafe name.withCString({ unsafe fstatat(directory, $0, &status, AT_SYMLINK_NOFOLLOW) }) == 0 else {
                let code = errno
                if code == ENOENT { return nil }
                throw Syscall.failure("fstatat", code: code, path: path)
            }
            let isRegular = status.st_mode & S_IFMT == S_IFREG
            if options.existing == .replaceOwnRegularFile {
                guard isRegular else {
                    throw IOError(.notARegularFile, "\(path) is not a regular file; left as it is", path: path)
                }
                guard status.st_uid == geteuid() else {
                    throw IOError(.wrongOwner, "\(path) is owned by another user; left as it is", path: path)
                }
            }
            return isRegular ? UInt32(status.st_mode) : nil
        }

        /// `.<prefix>.<16 hex digits>.tmp`, within NAME_MAX whatever the prefix.
        private static func temporaryName(for prefix: FilePath) -> FilePath {
            let random = "." + Hex.encode(SecureRandom.bytes(8)) + ".tmp"
            return FilePath(trusted: [UInt8(ascii: ".")] + prefix.bytes.prefix(200) + Array(random.utf8))
        }
    }
}
