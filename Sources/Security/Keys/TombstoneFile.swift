@_spi(Testing) public import AetherIO

/// A tombstone list on disk (the host's `host/tombstones`): read the careful way (`ProtectedFile`), written
/// with AetherIO's atomic writer (mode 0600, only a regular file of this user replaced), damage reported with
/// the file's name and never overwritten.
///
/// Fails closed: a list that cannot be read or is damaged is an error, never an empty list, so that a retired
/// key is never accepted again because its tombstone could not be read.
public struct TombstoneFile: Sendable {
    /// What the file holds.
    public enum Status: Sendable, Hashable {
        /// No file: no key is retired.
        case absent
        /// A valid list, in this form.
        case intact(TombstoneList, TombstoneFormat.Form)
        /// A damaged file, left as found.
        case damaged(KeyStoreDamage)
    }

    /// The file's path as bytes, exactly as given (a name that is not UTF-8 stays as it is).
    public let filePath: FilePath

    /// The file's path, for messages (bytes that are not UTF-8 shown as `\xHH`).
    public var path: String { filePath.description }

    /// The list at `path`.
    public init(path: FilePath) { self.filePath = path }

    /// The list at `path` given as text.
    public init(path: String) { self.init(path: FilePath(path)) }

    /// For tests: where the next writes fail.
    @_spi(Testing) public var writeFault: AtomicFile.Fault?

    /// What the file holds, without changing anything. A file that cannot be opened or read throws
    /// `.systemCall` naming the path.
    public func inspect() throws(SecurityError) -> Status {
        let fd: Int32
        do {
            fd = try AnchoredFiles.openDirectory(filePath.directory)
        } catch  where error == .noEntry {
            return .absent
        } catch {
            throw ProtectedFile.failure("open the directory of", path, error)
        }
        defer { AnchoredFiles.closeDescriptor(fd) }
        return try Self.inspect(directory: fd, name: filePath.lastComponent, path: path)
    }

    /// The list; empty when there is no file. A damaged file throws `.keyStoreDamaged` naming the path.
    public func load() throws(SecurityError) -> TombstoneList {
        switch try inspect() {
        case .absent: return TombstoneList()
        case .intact(let list, _): return list
        case .damaged(let damage): throw Self.damagedError(path, damage)
        }
    }

    /// Adds `id` and writes the list in version 1 (one atomic write; an old text file is replaced by it).
    /// Returns false when it was already there (nothing is written). A damaged file is refused, never overwritten.
    @discardableResult
    public func record(_ id: KeyID, retiredAt: UInt64) throws(SecurityError) -> Bool {
        let fd: Int32
        do {
            fd = try AnchoredFiles.openDirectory(filePath.directory)
        } catch {
            throw ProtectedFile.failure("open the directory of", path, error)
        }
        defer { AnchoredFiles.closeDescriptor(fd) }
        return try Self.record(
            id, retiredAt: retiredAt, directory: fd, directoryPath: filePath.directory, name: filePath.lastComponent,
            fault: writeFault)
    }

    // MARK: Shared with the key store's retired markers

    static func inspect(directory: Int32, name: FilePath, path: String) throws(SecurityError) -> Status {
        switch try ProtectedFile.read(
            directory: directory, name: name, path: path, maximumByteCount: TombstoneFormat.maximumByteCount)
        {
        case .absent: return .absent
        case .damaged(let damage): return .damaged(damage)
        case .bytes(let contents, let length):
            let parsed = unsafe contents.withUnsafeBytes { raw in
                unsafe TombstoneFormat.parse(UnsafeRawBufferPointer(rebasing: raw[0..<length]))
            }
            switch parsed {
            case .list(let list, let form): return .intact(list, form)
            case .damaged(let damage): return .damaged(damage)
            }
        }
    }

    /// Adds `id` to the list `name` in the open directory `directory` (`directoryPath` names it in messages).
    static func record(
        _ id: KeyID, retiredAt: UInt64, directory: Int32, directoryPath: FilePath, name: FilePath,
        fault: AtomicFile.Fault?
    ) throws(SecurityError) -> Bool {
        let path = directoryPath.appending(name).description
        var list: TombstoneList
        var form = TombstoneFormat.Form.version1
        switch try inspect(directory: directory, name: name, path: path) {
        case .absent: list = TombstoneList()
        case .intact(let found, let foundForm): (list, form) = (found, foundForm)
        case .damaged(let damage): throw damagedError(path, damage)
        }
        // An old text file is rewritten in version 1 even when the key is already in it.
        guard try list.insert(id, retiredAt: retiredAt) || form == .legacyText else { return false }
        var options = ProtectedFile.writeOptions(temporaryPrefix: name.description)
        options.fault = fault
        let bytes = TombstoneFormat.encode(list)
        do {
            try AtomicFile.write(
                bytes, named: name, inDirectory: directory, directoryPath: directoryPath.description, options: options)
        } catch {
            throw SecurityError(.systemCall, "could not write the tombstone list \(path): \(error.message)")
        }
        return true
    }

    static func damagedError(_ path: String, _ damage: KeyStoreDamage) -> SecurityError {
        SecurityError(
            .keyStoreDamaged,
            "the tombstone list \(path) is damaged (\(damage)); it is left as it is: move it aside and retire the keys again"
        )
    }
}
