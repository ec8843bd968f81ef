import AetherIO
import AetherSecurity

/// The state directory's master key: exactly 32 bytes from the CSPRNG in `resume.key`, mode 0600, owned by the
/// effective user; snapshot and audit keys are derived from it with HKDF and it is never used directly.
///
/// Creation happens once: the bytes go to a new temporary file (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600),
/// are fsynced, and are published with `linkat`, which fails when the name already exists. So two processes
/// starting at once end with one key (the loser reads the winner's), and a crash leaves either no key file or
/// a whole one. The key bytes go from the file straight into wiped storage.
enum MasterKeyFile {
    /// Length of the key file.
    static let byteCount = 32

    static func loadOrCreate(directory: Int32, directoryPath: FilePath) throws(UploaderError) -> SymmetricKey {
        let name = UploadStateDirectory.masterKeyFileName
        let shown = directoryPath.appending(name).description
        // Two rounds: when another process publishes its key between our look and our link, read that one.
        for _ in 0..<2 {
            if let key = try load(directory: directory, name: name, shown: shown) { return key }
            _ = try create(directory: directory, name: name, shown: shown)
        }
        guard let key = try load(directory: directory, name: name, shown: shown) else {
            throw UploaderError(.systemCall, "the master key file \(shown) vanished while it was being created")
        }
        return key
    }

    /// The key, or nil when there is no key file. A file that is not what this module writes is damage.
    private static func load(directory: Int32, name: String, shown: String) throws(UploaderError) -> SymmetricKey? {
        let fd: Int32
        do {
            fd = try AnchoredFiles.openForReading(directory: directory, FilePath(name))
        } catch  where error == .noEntry {
            return nil
        } catch  where error == .symbolicLink {
            throw damaged(shown, "is a symbolic link")
        } catch {
            throw UploadStateDirectory.failure("open", shown, error)
        }
        defer { AnchoredFiles.closeDescriptor(fd) }
        let status: FileStatus
        do { status = try AnchoredFiles.status(fd) } catch { throw UploadStateDirectory.failure("stat", shown, error) }
        guard status.isRegularFile else { throw damaged(shown, "is \(status.kindName)") }
        guard status.ownerID == AnchoredFiles.effectiveUserID() else {
            throw damaged(shown, "is owned by another user")
        }
        guard status.permissions == 0o600 else {
            throw damaged(shown, "has mode \(String(status.permissions, radix: 8)), not 600")
        }
        guard status.size == byteCount else { throw damaged(shown, "is \(status.size) bytes, not \(byteCount)") }
        var length = 0
        let bytes: SecureBytes
        do {
            // One byte more than the key, to see a file that grew after the fstat.
            let read = try unsafe SecureBytes(count: byteCount + 1) { (buffer) throws(AnchoredFiles.Errno) in
                length = try unsafe AnchoredFiles.readFully(fd, into: buffer)
            }
            guard length == byteCount else { throw damaged(shown, "changed size while it was read") }
            bytes = unsafe read.withUnsafeBytes { raw in
                unsafe SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[0..<byteCount]))
            }
        } catch let failure as UploaderError {
            throw failure
        } catch let failure as AnchoredFiles.Errno {
            throw UploadStateDirectory.failure("read", shown, failure)
        } catch {
            throw UploaderError(.systemCall, "could not read \(shown)")
        }
        do {
            return try SymmetricKey(secureBytes: bytes)
        } catch {
            throw damaged(shown, "does not hold a 256-bit key")
        }
    }

    /// Writes a fresh key and publishes it; false when another key was published first.
    private static func create(directory: Int32, name: String, shown: String) throws(UploaderError) -> Bool {
        let temporary = ".\(name).\(Hex.encode(SecureRandom.bytes(8))).tmp"
        let fd: Int32
        do {
            fd = try AnchoredFiles.createExclusive(directory: directory, FilePath(temporary), mode: 0o600)
        } catch {
            throw UploadStateDirectory.failure("create a temporary key file beside", shown, error)
        }
        var published = false
        defer {
            // The temporary name goes in every case; after a link the key lives on under `name`.
            try? AnchoredFiles.unlink(directory: directory, FilePath(temporary))
            if published { try? AnchoredFiles.synchronize(directory) }
        }
        do {
            defer { AnchoredFiles.closeDescriptor(fd) }
            try AnchoredFiles.setPermissions(fd, 0o600)
            let key = SecureBytes(randomCount: byteCount)
            try unsafe key.withUnsafeBytes { (raw) throws(AnchoredFiles.Errno) in
                try unsafe AnchoredFiles.writeFully(fd, from: raw)
            }
            try AnchoredFiles.synchronize(fd)
        } catch {
            throw UploadStateDirectory.failure("write a temporary key file beside", shown, error)
        }
        do {
            try AnchoredFiles.link(directory: directory, FilePath(temporary), to: FilePath(name))
        } catch  where error == .exists {
            return false
        } catch {
            throw UploadStateDirectory.failure("publish", shown, error)
        }
        published = true
        return true
    }

    private static func damaged(_ shown: String, _ why: String) -> UploaderError {
        UploaderError(
            .masterKeyDamaged,
            "the master key file \(shown) \(why); it was left as it is. Moving it away starts over with a new key "
                + "(existing snapshots then cannot be read and those uploads restart)")
    }
}
