@_spi(Testing) public import AetherIO

/// The Linux key store: one file per host id (`<host id hex>.key`, mode 0600) in a directory of mode
/// 0700 owned by the user, by default `$XDG_STATE_HOME/aether/keys` (`~/.local/state/aether/keys`).
///
/// A save writes a temporary file in the same directory (created 0600 with O_EXCL), fsyncs it,
/// renames it over the item and fsyncs the directory, so a reader or a crash sees the old item or
/// the new one. An item that is damaged (see `KeyStoreDamage`) is reported and never overwritten or
/// deleted. Key bytes go from the file straight into `SecureBytes`; every buffer that held them is wiped.
/// The file format is in docs/KEY-STORE.md.
public struct FileKeyStore: KeyStore {
    /// Mode of an item file.
    public static let fileMode: UInt32 = 0o600
    /// Mode of the store directory.
    public static let directoryMode: UInt32 = 0o700

    /// What the store holds for one host.
    public enum ItemStatus: Sendable {
        /// No item.
        case absent
        /// A valid item.
        case intact(KeyStoreItem)
        /// A damaged item, left as found.
        case damaged(KeyStoreDamage)
    }

    /// Every item of the store: the valid ones and what is wrong with the others.
    public struct LoadReport: Sendable {
        /// The valid items, by host id.
        public var items: [KeyStoreItem]
        /// The damaged items.
        public var damaged: [HostID: KeyStoreDamage]
    }

    /// The store's directory as bytes, exactly as given (a name that is not UTF-8 stays as it is): the
    /// directory is opened with these bytes once per operation, and every file in it is reached relative to
    /// that descriptor.
    public let directoryPath: FilePath

    /// The store's directory, for messages (bytes that are not UTF-8 shown as `\xHH`).
    public var directory: String { directoryPath.description }

    /// For tests: where the store's writes fail (`AtomicFile.Fault`).
    @_spi(Testing) public var writeFault: AtomicFile.Fault?

    /// A store in `directory` (created 0700 on the first save when missing).
    public init(directory: FilePath) { self.directoryPath = directory }

    /// A store in `directory` given as text.
    public init(directory: String) { self.init(directory: FilePath(directory)) }

    /// The default directory from this process's environment (see `defaultDirectory(environment:)`).
    public static func defaultDirectory() throws(SecurityError) -> String {
        try defaultDirectory { AnchoredFiles.environment($0) }
    }

    /// `$XDG_STATE_HOME/aether/keys` when XDG_STATE_HOME is an absolute path, else `$HOME/.local/state/aether/keys`.
    public static func defaultDirectory(environment: (String) -> String?) throws(SecurityError) -> String {
        if let state = environment("XDG_STATE_HOME"), state.hasPrefix("/") { return state + "/aether/keys" }
        guard let home = environment("HOME"), home.hasPrefix("/") else {
            throw SecurityError(.keyStoreDamaged, "neither XDG_STATE_HOME nor HOME is an absolute path")
        }
        return home + "/.local/state/aether/keys"
    }

    /// The file name of a host's item.
    public static func fileName(for hostID: HostID) -> String { hostID.hex + ".key" }

    /// The path of a host's item (for messages that tell the user which file to look at).
    public func path(for hostID: HostID) -> String { directoryPath.appending(Self.fileName(for: hostID)).description }

    // MARK: KeyStore

    /// The host's item, nil when absent; `.keyStoreDamaged` when damaged.
    public func load(hostID: HostID) throws(SecurityError) -> KeyStoreItem? {
        switch try inspect(hostID: hostID) {
        case .absent: return nil
        case .intact(let item): return item
        case .damaged(let damage): throw damage.error(hostID: hostID, path: path(for: hostID))
        }
    }

    /// Replaces the host's item in one atomic write (AetherIO's `AtomicFile`, mode exactly 0600); refuses
    /// (writing nothing) when the item on disk is damaged.
    public func save(_ item: KeyStoreItem) throws(SecurityError) {
        let dir = try openDirectory(creating: true)
        defer { AnchoredFiles.closeDescriptor(dir) }
        if case .damaged(let damage) = try inspect(directory: dir, hostID: item.hostID) {
            throw damage.error(hostID: item.hostID, path: path(for: item.hostID))
        }
        let encoded = KeyStoreFormat.encode(item)
        var options = ProtectedFile.writeOptions(temporaryPrefix: item.hostID.hex)
        options.fault = writeFault
        do {
            // Written straight from the wiped buffer: no other copy of the key bytes is made.
            try unsafe encoded.withUnsafeBytes { (bytes) throws(IOError) in
                try unsafe AtomicFile.write(
                    bytes, named: Self.fileName(for: item.hostID), inDirectory: dir, directoryPath: directory,
                    options: options)
            }
        } catch {
            throw SecurityError(.systemCall, "key store: could not save \(path(for: item.hostID)): \(error.message)")
        }
    }

    /// Deletes the host's item; refuses when it is damaged.
    public func delete(hostID: HostID) throws(SecurityError) {
        guard let dir = try openExistingDirectory() else { return }
        defer { AnchoredFiles.closeDescriptor(dir) }
        switch try inspect(directory: dir, hostID: hostID) {
        case .absent: return
        case .damaged(let damage): throw damage.error(hostID: hostID, path: path(for: hostID))
        case .intact: break
        }
        do {
            try AnchoredFiles.unlink(directory: dir, FilePath(Self.fileName(for: hostID)))
            try AnchoredFiles.synchronize(dir)
        } catch {
            throw Self.failure("delete the item", error)
        }
    }

    /// Host ids with an item file (damaged or not), in order. Other files are ignored.
    public func hostIDs() throws(SecurityError) -> [HostID] {
        guard let dir = try openExistingDirectory() else { return [] }
        defer { AnchoredFiles.closeDescriptor(dir) }
        let names: [String]
        do {
            names = try AnchoredFiles.listDirectory(dir)
        } catch {
            throw Self.failure("list the key store directory", error)
        }
        return names.compactMap { name -> HostID? in
            guard name.hasSuffix(".key") else { return nil }
            return try? HostID(hex: String(name.dropLast(4)))
        }.sorted()
    }

    // MARK: Inspection

    /// What the store holds for `hostID`, without changing anything on disk.
    public func inspect(hostID: HostID) throws(SecurityError) -> ItemStatus {
        guard let dir = try openExistingDirectory() else { return .absent }
        defer { AnchoredFiles.closeDescriptor(dir) }
        return try inspect(directory: dir, hostID: hostID)
    }

    /// Every item: the valid ones and the damage of the others.
    public func loadAll() throws(SecurityError) -> LoadReport {
        var report = LoadReport(items: [], damaged: [:])
        for hostID in try hostIDs() {
            switch try inspect(hostID: hostID) {
            case .absent: break
            case .intact(let item): report.items.append(item)
            case .damaged(let damage): report.damaged[hostID] = damage
            }
        }
        return report
    }

    private func inspect(directory dir: Int32, hostID: HostID) throws(SecurityError) -> ItemStatus {
        switch try ProtectedFile.read(
            directory: dir, name: FilePath(Self.fileName(for: hostID)), path: path(for: hostID),
            maximumByteCount: KeyStoreFormat.maximumByteCount)
        {
        case .absent: return .absent
        case .damaged(let damage): return .damaged(damage)
        case .bytes(let contents, let length):
            let parsed = unsafe contents.withUnsafeBytes { raw in
                unsafe KeyStoreFormat.parse(UnsafeRawBufferPointer(rebasing: raw[0..<length]), expectedHostID: hostID)
            }
            switch parsed {
            case .item(let item): return .intact(item)
            case .damaged(let damage): return .damaged(damage)
            }
        }
    }

    // MARK: Retired markers

    /// The name of the list of keys retired by an authenticated tombstone (`TombstoneFormat`).
    public static let retiredFileName = "retired"

    /// The path of the retired markers.
    public var retiredPath: String { directoryPath.appending(Self.retiredFileName).description }

    /// Keys retired by an authenticated tombstone, from the markers file (empty when there is none).
    /// A damaged file throws `.keyStoreDamaged` naming it: which keys are retired cannot be proven.
    public func retiredKeys() throws(SecurityError) -> TombstoneList {
        guard let dir = try openExistingDirectory() else { return TombstoneList() }
        defer { AnchoredFiles.closeDescriptor(dir) }
        switch try TombstoneFile.inspect(directory: dir, name: FilePath(Self.retiredFileName), path: retiredPath) {
        case .absent: return TombstoneList()
        case .intact(let list, _): return list
        case .damaged(let damage): throw TombstoneFile.damagedError(retiredPath, damage)
        }
    }

    /// Adds `id` to the retired markers in one atomic write (nothing is written when it is there already).
    public func markRetired(_ id: KeyID, at instant: KeyTimestamp) throws(SecurityError) {
        let dir = try openDirectory(creating: true)
        defer { AnchoredFiles.closeDescriptor(dir) }
        _ = try TombstoneFile.record(
            id, retiredAt: instant.millisecondsSinceEpoch, directory: dir, directoryPath: directoryPath,
            name: FilePath(Self.retiredFileName), fault: writeFault)
    }

    // MARK: Directory

    /// The directory, opened; nil when it does not exist.
    private func openExistingDirectory() throws(SecurityError) -> Int32? {
        do {
            _ = try AnchoredFiles.statNoFollow(directoryPath)
        } catch  where error == .noEntry {
            return nil
        } catch {
            throw Self.failure("stat the key store directory", error)
        }
        return try openDirectory(creating: false)
    }

    /// Opens the directory and checks it is a real directory of this user with mode 0700 (fails closed).
    private func openDirectory(creating: Bool) throws(SecurityError) -> Int32 {
        if creating { try createDirectories() }
        let fd: Int32
        do {
            fd = try AnchoredFiles.openDirectory(directoryPath)
        } catch {
            throw Self.failure("open the key store directory", error)
        }
        let status: FileStatus
        do {
            status = try AnchoredFiles.status(fd)
        } catch {
            AnchoredFiles.closeDescriptor(fd)
            throw Self.failure("stat the key store directory", error)
        }
        guard status.isDirectory, status.ownerID == AnchoredFiles.effectiveUserID(),
            status.permissions == Self.directoryMode
        else {
            AnchoredFiles.closeDescriptor(fd)
            throw SecurityError(
                .keyStoreDamaged, "the key store directory must be owned by this user with mode 0700; left unchanged")
        }
        return fd
    }

    /// mkdir -p with mode 0700 for every directory it creates; the last one is set to 0700 exactly. The
    /// path is split on its bytes, so a component that is not UTF-8 is created as it is.
    private func createDirectories() throws(SecurityError) {
        let slash = UInt8(ascii: "/")
        let parts = directoryPath.bytes.split(separator: slash, omittingEmptySubsequences: true)
        var bytes: [UInt8] = directoryPath.bytes.first == slash ? [] : [UInt8(ascii: ".")]
        for (index, part) in parts.enumerated() {
            bytes += [slash] + part
            // The bytes are a prefix of the store's path, so they hold no NUL.
            let path: FilePath
            do { path = try FilePath(bytes: bytes) } catch { throw SecurityError(.systemCall, error.message) }
            do {
                try AnchoredFiles.makeDirectory(path, mode: Self.directoryMode)
            } catch  where error == .exists {
                continue
            } catch {
                throw Self.failure("create the key store directory", error)
            }
            if index == parts.count - 1 {
                do {
                    let fd = try AnchoredFiles.openDirectory(path)
                    defer { AnchoredFiles.closeDescriptor(fd) }
                    try AnchoredFiles.setPermissions(fd, Self.directoryMode)
                } catch {
                    throw Self.failure("set the key store directory's mode", error)
                }
            }
        }
    }

    private static func failure(_ what: String, _ error: AnchoredFiles.Errno) -> SecurityError {
        SecurityError(.systemCall, "key store: could not \(what): \(error.text)")
    }
}
