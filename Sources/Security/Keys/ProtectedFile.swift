@_spi(Testing) import AetherIO

/// Reading a file of the key store (an item, a tombstone list) the one careful way: never through a
/// symbolic link, never blocking on a FIFO, judged by what was opened (a regular file of this user with
/// mode 0600, not larger than its format allows), read straight into wiped storage.
enum ProtectedFile {
    /// What a read found.
    enum Contents {
        /// No file of that name.
        case absent
        /// A file that must be left as it is.
        case damaged(KeyStoreDamage)
        /// The bytes (`length` of them are valid).
        case bytes(SecureBytes, length: Int)
    }

    /// Reads `name` in the open directory `directory`; `path` names it in errors. System call failures
    /// (including a file that cannot be opened or read) throw `.systemCall` naming the path.
    static func read(
        directory: Int32, name: FilePath, path: String, maximumByteCount: Int
    ) throws(SecurityError) -> Contents {
        let status: FileStatus
        do {
            status = try AnchoredFiles.statNoFollow(directory: directory, name)
        } catch  where error == .noEntry {
            return .absent
        } catch {
            throw failure("stat", path, error)
        }
        if let damage = damage(of: status, maximumByteCount: maximumByteCount) { return .damaged(damage) }

        let fd: Int32
        do {
            fd = try AnchoredFiles.openForReading(directory: directory, name)
        } catch  where error == .noEntry {
            return .absent
        } catch  where error == .symbolicLink {
            return .damaged(.notARegularFile)
        } catch {
            throw failure("open", path, error)
        }
        defer { AnchoredFiles.closeDescriptor(fd) }
        let opened: FileStatus
        do {
            opened = try AnchoredFiles.status(fd)
        } catch {
            throw failure("stat", path, error)
        }
        // The name was swapped between the stat and the open: judge what was opened.
        if let damage = damage(of: opened, maximumByteCount: maximumByteCount) { return .damaged(damage) }

        // One byte more than the largest valid file, to see a file that grew after the fstat.
        var length = 0
        let contents: SecureBytes
        do {
            contents = try unsafe SecureBytes(count: maximumByteCount + 1) {
                (buffer) throws(AnchoredFiles.Errno) in length = try unsafe AnchoredFiles.readFully(fd, into: buffer)
            }
        } catch {
            throw failure("read", path, error)
        }
        guard length <= maximumByteCount else { return .damaged(.garbage) }
        return .bytes(contents, length: length)
    }

    private static func damage(of status: FileStatus, maximumByteCount: Int) -> KeyStoreDamage? {
        guard status.isRegularFile else { return .notARegularFile }
        guard status.ownerID == AnchoredFiles.effectiveUserID() else { return .wrongOwner }
        guard status.permissions == FileKeyStore.fileMode else { return .wrongMode }
        guard status.size <= maximumByteCount else { return .garbage }
        return nil
    }

    /// A failed system call on `path`, as the key store reports it.
    static func failure(_ what: String, _ path: String, _ error: AnchoredFiles.Errno) -> SecurityError {
        SecurityError(.systemCall, "could not \(what) \(path): \(error.text)")
    }

    /// The options every key store file is written with: exactly 0600, only a regular file of this user replaced.
    static func writeOptions(temporaryPrefix: String) -> AtomicFile.Options {
        var options = AtomicFile.Options.secret
        options.temporaryPrefix = temporaryPrefix
        return options
    }
}
