#if canImport(Glibc)
    import Glibc
#endif

/// The one atomic file writer of Aether: a new temporary file beside the target (`O_CREAT | O_EXCL |
/// O_NOFOLLOW`, its name from the CSPRNG), every byte, fsync, rename over the target, fsync of the
/// directory. A reader or a crash sees the old content or the new, never a mix; a failure before the
/// rename leaves the target exactly as it was and removes the temporary file.
///
/// Used by the key store (items, retired markers), the host's tombstone list and the manifests and
/// shard indexes of the file commands. Options choose the mode of the result and whether an existing
/// target must be a regular file of this user before it is replaced.
public enum AtomicFile {
    /// How a write treats modes and the file it replaces.
    public struct Options: Sendable, Hashable {
        /// The permission bits of the written file.
        public enum Permissions: Sendable, Hashable {
            /// A new file gets `0666` less the umask; a replaced regular file keeps its mode.
            case inherit
            /// Exactly these bits, whatever the umask (`0o600` for secrets).
            case exactly(UInt32)
            /// These bits less the umask, whether or not a file is replaced.
            case umasked(UInt32)
        }

        /// What may stand at the target's name.
        public enum Existing: Sendable, Hashable {
            /// Nothing, or anything `rename` replaces.
            case replace
            /// Nothing, or a regular file owned by the effective user; anything else (a symbolic link, a
            /// directory, another user's file) is refused with nothing written (fails closed).
            case replaceOwnRegularFile
        }

        /// Where a test makes the write fail (`AtomicFile.Fault`); nil in production.
        @_spi(Testing) public var fault: Fault? = nil

        /// The permission bits of the result.
        public var permissions: Permissions
        /// What may be replaced.
        public var existing: Existing
        /// The temporary file is `.<prefix>.<16 hex digits>.tmp`; the prefix is the target's name when nil.
        public var temporaryPrefix: String?

        /// Options; the defaults honour the umask for a new file and keep a replaced file's mode.
        public init(
            permissions: Permissions = .inherit, existing: Existing = .replace, temporaryPrefix: String? = nil
        ) {
            self.permissions = permissions
            self.existing = existing
            self.temporaryPrefix = temporaryPrefix
        }

        /// For secrets: mode exactly 0600, and only a regular file of this user is replaced.
        public static let secret = Options(permissions: .exactly(0o600), existing: .replaceOwnRegularFile)
    }

    /// A step at which a test makes the write fail, to show that the target is left whole.
    @_spi(Testing) public enum Fault: Sendable, Hashable {
        /// After half the bytes are written (a full disk).
        case write
        /// Instead of the fsync of the temporary file.
        case fileSync
        /// Instead of the rename.
        case rename
        /// Instead of the fsync of the directory (the rename has happened).
        case directorySync
    }

    /// Writes `bytes` to `path` with the default options (umask for a new file, a replaced file keeps its mode).
    public static func write(_ bytes: some Collection<UInt8>, to path: String, options: Options = Options())
        throws(IOError)
    {
        let array = Array(bytes)
        var failure: IOError?
        unsafe array.withUnsafeBytes { raw in
            do throws(IOError) { try unsafe write(raw, to: path, options: options) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Writes `bytes` to the file `name` inside the open directory `directory` (see the buffer form).
    public static func write(
        _ bytes: some Collection<UInt8>, named name: String, inDirectory directory: Int32, directoryPath: String,
        options: Options
    ) throws(IOError) {
        let array = Array(bytes)
        var failure: IOError?
        unsafe array.withUnsafeBytes { raw in
            do throws(IOError) {
                try unsafe write(
                    raw, named: name, inDirectory: directory, directoryPath: directoryPath, options: options)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Writes `bytes` to `path` with permission bits `mode` less the umask (the writer's first form).
    public static func write(_ bytes: some Collection<UInt8>, to path: String, mode: UInt32) throws(IOError) {
        try write(bytes, to: path, options: Options(permissions: .umasked(mode)))
    }

    /// Writes `bytes` to `path`. The bytes are written straight from the buffer (nothing is copied, so a
    /// caller's wiped storage stays the only copy of a secret).
    public static func write(_ bytes: UnsafeRawBufferPointer, to path: String, options: Options) throws(IOError) {
        try unsafe write(bytes, to: FilePath(path), options: options)
    }

    /// Writes `bytes` to `path` given as bytes (exactly as from `argv`; a name that is not UTF-8 stays as it is).
    public static func write(_ bytes: some Collection<UInt8>, to path: FilePath, options: Options = Options())
        throws(IOError)
    {
        let array = Array(bytes)
        var failure: IOError?
        unsafe array.withUnsafeBytes { raw in
            do throws(IOError) { try unsafe write(raw, to: path, options: options) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// The buffer form of `write(_:to:options:)` for a path given as bytes.
    public static func write(_ bytes: UnsafeRawBufferPointer, to path: FilePath, options: Options) throws(IOError) {
        let directory = path.directory
        let directoryDescriptor = try Syscall.retryingEINTR("open", path: directory.description) {
            unsafe directory.withCString { unsafe Glibc.open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }
        defer { Syscall.close(directoryDescriptor) }
        try unsafe write(
            bytes, named: path.lastComponent, inDirectory: directoryDescriptor, directoryPath: directory.description,
            options: options)
    }

    /// Writes `bytes` to the file `name` inside the open directory `directory` (every call is relative to the
    /// descriptor, so a directory the caller opened and checked cannot be swapped underneath). `directoryPath`
    /// only names the place in errors.
    public static func write(
        _ bytes: UnsafeRawBufferPointer, named name: String, inDirectory directory: Int32, directoryPath: String,
        options: Options
    ) throws(IOError) {
        try unsafe write(
            bytes, named: FilePath(name), inDirectory: directory, directoryPath: directoryPath, options: options)
    }

    /// `write(_:named:inDirectory:directoryPath:options:)` with the name as bytes.
    static func write(
        _ bytes: UnsafeRawBufferPointer, named name: FilePath, inDirectory directory: Int32, directoryPath: String,
        options: Options
    ) throws(IOError) {
        let target = directoryPath + "/" + name.description
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
                unsafe openat(directory, $0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
            }
        }
        var renamed = false
        defer { if !renamed { _ = unsafe temporary.withCString { unsafe unlinkat(directory, $0, 0) } } }
        do {
            defer { Syscall.close(descriptor) }
            if exact {
                // The umask may have cleared bits the result must have.
                _ = try Syscall.retryingEINTR("fchmod", path: temporaryPath) { fchmod(descriptor, mode_t(mode)) }
            }
            let limit = options.fault == .write ? bytes.count / 2 : bytes.count
            var written = 0
            while written < limit {
                let count = try Syscall.retryingEINTR("write", path: temporaryPath) {
                    unsafe Glibc.write(descriptor, bytes.baseAddress! + written, limit - written)
                }
                written += count
            }
            if options.fault == .write { throw injected("write", ENOSPC, temporaryPath) }
            if options.fault == .fileSync { throw injected("fsync", EIO, temporaryPath) }
            _ = try Syscall.retryingEINTR("fsync", path: temporaryPath) { fsync(descriptor) }
        }
        if options.fault == .rename { throw injected("rename", EIO, target) }
        _ = try Syscall.retryingEINTR("rename", path: target) {
            unsafe temporary.withCString { from in
                unsafe name.withCString { to in unsafe renameat(directory, from, directory, to) }
            }
        }
        renamed = true
        // The new content is in place; the directory's fsync makes the rename itself durable.
        if options.fault == .directorySync { throw injected("fsync", EIO, directoryPath) }
        _ = try Syscall.retryingEINTR("fsync", path: directoryPath) { fsync(directory) }
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

    private static func injected(_ call: StaticString, _ code: Int32, _ path: String) -> IOError {
        Syscall.failure(call, code: code, path: path)
    }
}
