/// The one atomic file writer of Aether: a new temporary file beside the target (`O_CREAT | O_EXCL |
/// O_NOFOLLOW`, its name from the CSPRNG), every byte, fsync, rename over the target, fsync of the
/// directory. A reader or a crash sees the old content or the new, never a mix; a failure before the
/// rename leaves the target exactly as it was and removes the temporary file.
///
/// Two forms, one code path: `Staged` streams an output too large for memory (the file `ec decode`
/// rebuilds) and is read back before it is committed; the buffer forms (`write`) are `Staged` with one
/// write. Used by the key store (items, retired markers), the host's tombstone list, the manifests and
/// the rebuilt files of the file commands. Options choose the mode of the result and whether an existing
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
        /// After half the bytes of a write are written (a full disk); in `Staged`, at every write.
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
        try write(bytes, named: FilePath(name), inDirectory: directory, directoryPath: directoryPath, options: options)
    }

    /// Writes `bytes` to the file `name`, given as bytes, inside the open directory `directory`.
    public static func write(
        _ bytes: some Collection<UInt8>, named name: FilePath, inDirectory directory: Int32, directoryPath: String,
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
        let staged = try Staged(replacing: path, options: options)
        try unsafe staged.write(bytes, at: 0)
        try staged.commit()
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

    /// `write(_:named:inDirectory:directoryPath:options:)` with the name as bytes: the streaming form
    /// (`Staged`) with one write of the whole buffer.
    public static func write(
        _ bytes: UnsafeRawBufferPointer, named name: FilePath, inDirectory directory: Int32, directoryPath: String,
        options: Options
    ) throws(IOError) {
        // The directory outlives this call, so the staged file borrows it.
        let staged = try Staged(
            name: name, directory: directory, owned: false, directoryPath: directoryPath, options: options)
        try unsafe staged.write(bytes, at: 0)
        try staged.commit()
    }
}
