public import AetherIO
public import AetherSecurity

/// Where the Uploader keeps its state: `$XDG_STATE_HOME/aether` (default `~/.local/state/aether`), or the
/// directory the caller passes for `--state-dir`.
///
/// The directory is created with mode 0700 (every missing parent too). An existing one is used only when it
/// is a real directory (not a symbolic link), owned by the effective user, with no group or other permission
/// bits; anything else is refused with `.stateDirectoryRefused` and left exactly as it is (fails closed).
/// Every use opens the directory again without following links and judges what was opened.
///
/// Layout: `resume.key` (the master key, see `masterKey()`), `snapshots/` (the `SnapshotVault`), `telemetry/`
/// (`TelemetryRecorder`), `locks/` (`UploadLock`); each subdirectory is judged as the directory is
/// (`openSubdirectory`).
public struct UploadStateDirectory: Sendable, CustomStringConvertible {
    /// Mode of the directory and of every directory created inside it.
    public static let directoryMode: UInt32 = 0o700
    /// The master key file's name inside the directory.
    public static let masterKeyFileName = "resume.key"

    /// The directory as bytes, exactly as given.
    public let path: FilePath

    /// The directory for messages (bytes that are not UTF-8 shown as `\xHH`).
    public var description: String { path.description }

    /// Uses (creating when missing) the directory `path`; throws `.stateDirectoryRefused` when something that
    /// is not a private directory of this user stands there, `.systemCall` when it cannot be created.
    public init(path: FilePath) throws(UploaderError) {
        guard !path.isEmpty else { throw UploaderError(.invalidArgument, "the state directory path is empty") }
        self.path = path
        try createIfMissing()
        let fd = try open()
        AnchoredFiles.closeDescriptor(fd)
    }

    /// The directory from `--state-dir` when given, else the default from this process's environment.
    public static func resolve(override: FilePath?) throws(UploaderError) -> UploadStateDirectory {
        if let override { return try UploadStateDirectory(path: override) }
        return try UploadStateDirectory(path: defaultPath { AnchoredFiles.environment($0) })
    }

    /// `$XDG_STATE_HOME/aether` when XDG_STATE_HOME is an absolute path (the XDG rule: a relative one is
    /// ignored), else `$HOME/.local/state/aether`; `.invalidArgument` when neither is usable.
    public static func defaultPath(environment: (String) -> String?) throws(UploaderError) -> FilePath {
        if let state = environment("XDG_STATE_HOME"), state.hasPrefix("/") { return FilePath(state + "/aether") }
        guard let home = environment("HOME"), home.hasPrefix("/") else {
            throw UploaderError(
                .invalidArgument, "neither XDG_STATE_HOME nor HOME is an absolute path; pass --state-dir DIR")
        }
        return FilePath(home + "/.local/state/aether")
    }

    /// The master key of this state directory: 32 random bytes in `resume.key` (mode 0600, owned by this user),
    /// created on first use. A damaged key file throws `.masterKeyDamaged` and is never replaced.
    public func masterKey() throws(UploaderError) -> SymmetricKey {
        let fd = try open()
        defer { AnchoredFiles.closeDescriptor(fd) }
        return try MasterKeyFile.loadOrCreate(directory: fd, directoryPath: path)
    }

    // MARK: Internal

    /// Opens the directory and judges what was opened: a directory of this user without group or other bits.
    /// The caller closes the descriptor.
    func open() throws(UploaderError) -> Int32 {
        let fd: Int32
        do {
            fd = try AnchoredFiles.openDirectory(path)
        } catch  where error == .symbolicLink || error == .notADirectory {
            let kind = (try? AnchoredFiles.statNoFollow(path).kindName) ?? "not a directory"
            throw Self.refused(path.description, "is \(kind)")
        } catch {
            throw Self.failure("open", path.description, error)
        }
        do {
            try Self.judge(try AnchoredFiles.status(fd), path.description)
        } catch let failure as UploaderError {
            AnchoredFiles.closeDescriptor(fd)
            throw failure
        } catch {
            AnchoredFiles.closeDescriptor(fd)
            throw Self.failure("stat", path.description, error)
        }
        return fd
    }

    /// Opens (creating with mode 0700 when missing) the directory `name` inside the open directory `parent`,
    /// judged like the state directory itself. The caller closes the descriptor.
    func openSubdirectory(_ name: String, in parent: Int32) throws(UploaderError) -> Int32 {
        let shown = path.appending(name).description
        do {
            try AnchoredFiles.makeDirectory(directory: parent, FilePath(name), mode: Self.directoryMode)
        } catch  where error == .exists {
            // Judged below.
        } catch {
            throw Self.failure("create", shown, error)
        }
        let fd: Int32
        do {
            fd = try AnchoredFiles.openDirectory(directory: parent, FilePath(name))
        } catch  where error == .symbolicLink || error == .notADirectory {
            let kind =
                (try? AnchoredFiles.statNoFollow(directory: parent, FilePath(name)).kindName) ?? "not a directory"
            throw Self.refused(shown, "is \(kind)")
        } catch {
            throw Self.failure("open", shown, error)
        }
        do {
            let status = try AnchoredFiles.status(fd)
            if status.ownerID == AnchoredFiles.effectiveUserID(), status.permissions != Self.directoryMode,
                status.permissions & 0o077 == 0
            {
                // Our own new directory that the umask narrowed: widen it to exactly 0700 (never looser).
                try AnchoredFiles.setPermissions(fd, Self.directoryMode)
            }
            try Self.judge(try AnchoredFiles.status(fd), shown)
        } catch let failure as UploaderError {
            AnchoredFiles.closeDescriptor(fd)
            throw failure
        } catch {
            AnchoredFiles.closeDescriptor(fd)
            throw Self.failure("stat", shown, error)
        }
        return fd
    }

    /// mkdir -p with mode 0700 for each directory it creates; the last one is set to exactly 0700.
    private func createIfMissing() throws(UploaderError) {
        do {
            _ = try AnchoredFiles.statNoFollow(path)
            return
        } catch  where error == .noEntry {
            // Created below.
        } catch {
            throw Self.failure("stat", path.description, error)
        }
        let slash = UInt8(ascii: "/")
        let parts = path.bytes.split(separator: slash, omittingEmptySubsequences: true)
        var bytes: [UInt8] = path.bytes.first == slash ? [] : [UInt8(ascii: ".")]
        for (index, part) in parts.enumerated() {
            bytes += [slash] + part
            // A prefix of a valid path holds no NUL byte.
            guard let prefix = try? FilePath(bytes: bytes) else {
                throw UploaderError(.invalidArgument, "the state directory path holds a NUL byte")
            }
            do {
                try AnchoredFiles.makeDirectory(prefix, mode: Self.directoryMode)
            } catch  where error == .exists {
                continue
            } catch {
                throw Self.failure("create", prefix.description, error)
            }
            if index == parts.count - 1 {
                do {
                    let fd = try AnchoredFiles.openDirectory(prefix)
                    defer { AnchoredFiles.closeDescriptor(fd) }
                    try AnchoredFiles.setPermissions(fd, Self.directoryMode)
                } catch {
                    throw Self.failure("set the mode of", prefix.description, error)
                }
            }
        }
    }

    private static func judge(_ status: FileStatus, _ shown: String) throws(UploaderError) {
        guard status.isDirectory else { throw refused(shown, "is \(status.kindName)") }
        guard status.ownerID == AnchoredFiles.effectiveUserID() else {
            throw refused(shown, "is owned by another user (uid \(status.ownerID))")
        }
        guard status.permissions & 0o077 == 0 else {
            let mode = String(status.permissions, radix: 8)
            throw refused(shown, "has mode \(mode), open to other users; run `chmod 700` on it")
        }
    }

    private static func refused(_ shown: String, _ why: String) -> UploaderError {
        UploaderError(
            .stateDirectoryRefused, "state directory \(shown) \(why); it was left as it is (or pass --state-dir DIR)")
    }

    static func failure(_ what: String, _ shown: String, _ error: AnchoredFiles.Errno) -> UploaderError {
        UploaderError(.systemCall, "could not \(what) \(shown): \(error.text)", errno: error.code)
    }

    /// `failure` for an error whose type the compiler no longer knows (a closure that rethrows untyped).
    static func failure(_ what: String, _ shown: String, _ error: any Error) -> UploaderError {
        if let failure = error as? UploaderError { return failure }
        if let errno = error as? AnchoredFiles.Errno { return failure(what, shown, errno) }
        return UploaderError(.systemCall, "could not \(what) \(shown)")
    }
}
