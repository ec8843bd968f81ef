@_spi(Testing) import AetherIO
import AetherTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

@_spi(Testing) @testable import AetherSecurity

/// A fresh store directory under the system temporary directory, removed at the end.
struct KeyStoreScratch: ~Copyable {
    let root: URL
    let store: FileKeyStore

    init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("aether-keys-\(UUID().uuidString)")
        store = FileKeyStore(directory: root.appendingPathComponent("state/aether/keys").path)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    var directory: URL { URL(fileURLWithPath: store.directory) }

    func url(_ hostID: HostID) -> URL { directory.appendingPathComponent(FileKeyStore.fileName(for: hostID)) }

    func permissions(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    /// Bytes, mode, owner and inode of a file (a symbolic link is read as its target path).
    func fingerprint(_ url: URL) throws -> String {
        let manager = FileManager.default
        let attributes = try manager.attributesOfItem(atPath: url.path)
        let content: String
        if attributes[.type] as? FileAttributeType == .typeSymbolicLink {
            content = try manager.destinationOfSymbolicLink(atPath: url.path)
        } else if attributes[.type] as? FileAttributeType == .typeDirectory {
            content = "directory"
        } else {
            content = Hex.encode(try Data(contentsOf: url))
        }
        return "\(content) \(attributes[.posixPermissions] ?? "") \(attributes[.ownerAccountID] ?? "")"
            + " \(attributes[.systemFileNumber] ?? "") \(attributes[.modificationDate] ?? "")"
    }

    func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted() }
}

/// The ways an item file is damaged in the tests.
enum DamagedKeyStoreFile: String, CaseIterable, Sendable {
    case truncated, wrongMode, garbage, otherHostID, flippedKeyByte, unsupportedVersion, trailingBytes, symbolicLink,
        directory, empty

    var expected: KeyStoreDamage {
        switch self {
        case .truncated, .empty: .truncated
        case .wrongMode: .wrongMode
        case .garbage, .trailingBytes: .garbage
        case .otherHostID: .otherHostID
        case .flippedKeyByte: .checksumMismatch
        case .unsupportedVersion: .unsupportedVersion
        case .symbolicLink, .directory: .notARegularFile
        }
    }

    /// Puts the damaged item for `hostID` in place, starting from a valid saved item.
    func make(in scratch: borrowing KeyStoreScratch, hostID: HostID) throws {
        let url = scratch.url(hostID)
        var bytes = [UInt8](try Data(contentsOf: url))
        var mode = 0o600
        switch self {
        case .truncated: bytes.removeLast(20)
        case .empty: bytes = []
        case .wrongMode: mode = 0o644
        case .garbage: bytes = Array("this is not a key store item, it is a shopping list\n".utf8)
        case .otherHostID:
            let other = HostID()
            try scratch.store.save(try KeyStoreItem(hostID: other, keys: [KeyFixtures.key(other, at: 9)]))
            bytes = [UInt8](try Data(contentsOf: scratch.url(other)))
        case .flippedKeyByte: bytes[70] ^= 0x01
        case .unsupportedVersion: bytes[9] = 9
        case .trailingBytes: bytes += [0, 0, 0, 0]
        case .symbolicLink, .directory: break
        }
        try FileManager.default.removeItem(at: url)
        switch self {
        case .symbolicLink:
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "elsewhere.key")
        case .directory:
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        default:
            try Data(bytes).write(to: url)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
        }
    }
}

@Suite struct KeyFileStoreTests {
    let host = HostID()

    func item(_ hostID: HostID, keys: Int = 2, start: UInt64 = 1) throws -> KeyStoreItem {
        try KeyStoreItem(hostID: hostID, keys: (0..<keys).map { KeyFixtures.key(hostID, at: start + UInt64($0)) })
    }

    @Test func aSavedItemLoadsBackFromA0600FileInA0700Directory() throws {
        let scratch = KeyStoreScratch()
        let original = try item(host)
        try scratch.store.save(original)
        #expect(try scratch.store.load(hostID: host) == original)
        #expect(try scratch.permissions(scratch.url(host)) == 0o600)
        #expect(try scratch.permissions(scratch.directory) == 0o700)
        #expect(try scratch.permissions(scratch.directory.deletingLastPathComponent()) == 0o700)
        #expect(try scratch.names() == ["\(host.hex).key"])
    }

    @Test func aSaveReplacesTheItemWithANewFileAndLeavesNoTemporaryFile() throws {
        let scratch = KeyStoreScratch()
        try scratch.store.save(try item(host))
        let before = try FileManager.default.attributesOfItem(atPath: scratch.url(host).path)[.systemFileNumber]
        let replacement = try item(host, keys: 3, start: 100)
        try scratch.store.save(replacement)
        let after = try FileManager.default.attributesOfItem(atPath: scratch.url(host).path)[.systemFileNumber]
        #expect("\(before ?? "")" != "\(after ?? "")")  // renamed into place, not rewritten in place
        #expect(try scratch.store.load(hostID: host) == replacement)
        #expect(try scratch.names() == ["\(host.hex).key"])
    }

    @Test func aMissingItemOrDirectoryIsAbsentNotAnError() throws {
        let scratch = KeyStoreScratch()
        #expect(try scratch.store.load(hostID: host) == nil)
        #expect(try scratch.store.hostIDs().isEmpty)
        try scratch.store.delete(hostID: host)
        #expect(!FileManager.default.fileExists(atPath: scratch.store.directory))
    }

    @Test func hostIDsListsItemFilesAndIgnoresOtherFiles() throws {
        let scratch = KeyStoreScratch()
        let hosts = [HostID(), HostID(), HostID()]
        for hostID in hosts { try scratch.store.save(try item(hostID, keys: 1)) }
        for name in ["notes.txt", "ABCDEF.key", ".\(hosts[0].hex).0011.tmp"] {
            try Data([1, 2, 3]).write(to: scratch.directory.appendingPathComponent(name))
        }
        #expect(try scratch.store.hostIDs() == hosts.sorted())
        let report = try scratch.store.loadAll()
        #expect(report.items.map(\.hostID) == hosts.sorted() && report.damaged.isEmpty)
    }

    @Test func deleteRemovesTheItem() throws {
        let scratch = KeyStoreScratch()
        try scratch.store.save(try item(host))
        try scratch.store.delete(hostID: host)
        #expect(try scratch.store.load(hostID: host) == nil)
        #expect(try scratch.names().isEmpty)
    }

    @Test(arguments: DamagedKeyStoreFile.allCases)
    func aDamagedItemIsReportedAndLeftByteIdentical(_ damaged: DamagedKeyStoreFile) throws {
        let scratch = KeyStoreScratch()
        try scratch.store.save(try item(host))
        try damaged.make(in: scratch, hostID: host)
        let url = scratch.url(host)
        let before = try scratch.fingerprint(url)

        guard case .damaged(let damage) = try scratch.store.inspect(hostID: host) else {
            Issue.record("\(damaged) was not reported")
            return
        }
        #expect(damage == damaged.expected)
        let loadError = #expect(throws: SecurityError.self) { _ = try scratch.store.load(hostID: host) }
        #expect(loadError?.code == .keyStoreDamaged)
        #expect(loadError?.message.contains(damaged.expected.description) == true)
        let saveError = #expect(throws: SecurityError.self) { try scratch.store.save(try item(host, start: 50)) }
        #expect(saveError?.code == .keyStoreDamaged)
        let deleteError = #expect(throws: SecurityError.self) { try scratch.store.delete(hostID: host) }
        #expect(deleteError?.code == .keyStoreDamaged)
        #expect(try scratch.store.loadAll().damaged == [host: damaged.expected])
        _ = try KeyManager(store: scratch.store, clock: ManualClock())

        #expect(try scratch.fingerprint(url) == before)
        #expect(try scratch.names().filter { $0.hasSuffix(".tmp") }.isEmpty)
    }

    @Test(.enabled(if: getuid() == 0, "only root can give a file to another user"))
    func anItemOwnedByAnotherUserIsReportedAndLeftAlone() throws {
        let scratch = KeyStoreScratch()
        try scratch.store.save(try item(host))
        let url = scratch.url(host)
        try FileManager.default.setAttributes([.ownerAccountID: 4242], ofItemAtPath: url.path)
        let before = try scratch.fingerprint(url)
        guard case .damaged(.wrongOwner) = try scratch.store.inspect(hostID: host) else {
            Issue.record("a file of another user was not reported")
            return
        }
        #expect(throws: SecurityError.self) { try scratch.store.save(try item(host)) }
        #expect(try scratch.fingerprint(url) == before)
    }

    @Test func aDirectoryThatIsNot0700IsRefusedAndLeftAlone() throws {
        let scratch = KeyStoreScratch()
        try FileManager.default.createDirectory(
            at: scratch.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let error = #expect(throws: SecurityError.self) { try scratch.store.save(try item(host)) }
        #expect(error?.code == .keyStoreDamaged)
        #expect(try scratch.names().isEmpty)
        #expect(try scratch.permissions(scratch.directory) == 0o755)
    }

    @Test func theDefaultDirectoryFollowsXDGStateHome() throws {
        let xdg = ["XDG_STATE_HOME": "/state", "HOME": "/home/user"]
        #expect(try FileKeyStore.defaultDirectory { xdg[$0] } == "/state/aether/keys")
        let home = ["HOME": "/home/user", "XDG_STATE_HOME": "relative/ignored"]
        #expect(try FileKeyStore.defaultDirectory { home[$0] } == "/home/user/.local/state/aether/keys")
        #expect(throws: SecurityError.self) { try FileKeyStore.defaultDirectory { _ in nil } }
    }

    @Test func twoConcurrentSavesLeaveTheOldOrTheNewItemNeverAMix() throws {
        let scratch = KeyStoreScratch()
        let first = try item(host, keys: 2, start: 1)
        let second = try item(host, keys: 5, start: 100)
        try scratch.store.save(first)
        let store = scratch.store
        let failures = Mutex<[String]>([])
        let reads = Mutex(0)
        // Two writers and one reader; none waits on another, so two cores (or one) cannot deadlock.
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            for _ in 0..<(worker == 2 ? 120 : 30) {
                do {
                    if worker == 2 {
                        let loaded = try store.load(hostID: host)
                        if loaded != first && loaded != second { failures.withLock { $0.append("a mixed item") } }
                        reads.withLock { $0 += 1 }
                    } else {
                        try store.save(worker == 0 ? first : second)
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(reads.withLock { $0 } == 120)
        let final = try store.load(hostID: host)
        #expect(final == first || final == second)
        #expect(try scratch.names() == ["\(host.hex).key"])
    }

    @Test func aManagerOverTheFileStoreSurvivesARestart() throws {
        let scratch = KeyStoreScratch()
        let clock = ManualClock()
        let manager = try KeyManager(store: scratch.store, clock: clock)
        guard case .paired(let key) = try manager.pair(hostID: host) else {
            Issue.record("pairing an empty ring must succeed")
            return
        }
        #expect(manager.hostListed(host, pending: [], active: [key.id]).saveFailure == nil)
        let restarted = try KeyManager(store: scratch.store, clock: clock)
        #expect(restarted.connectOrder(for: host).map(\.id) == [key.id])
        #expect(restarted.connectOrder(for: host).first?.state == .active)
        #expect(restarted.connectOrder(for: host).first?.key == key.key)
    }

    // MARK: Issue 11: one atomic writer, retired markers, damage named by file

    @Test(arguments: [AtomicFile.Fault.write, .fileSync, .rename])
    func aFailedSaveLeavesThePreviousItemWholeAndNoTemporaryFile(_ fault: AtomicFile.Fault) throws {
        let scratch = KeyStoreScratch()
        let first = try item(host, keys: 2, start: 1)
        try scratch.store.save(first)
        let before = try scratch.fingerprint(scratch.url(host))
        var failing = scratch.store
        failing.writeFault = fault
        let error = #expect(throws: SecurityError.self) { try failing.save(try item(host, keys: 3, start: 10)) }
        #expect(error?.code == .systemCall)
        #expect(error?.message.contains(scratch.store.path(for: host)) == true)
        #expect(try scratch.fingerprint(scratch.url(host)) == before)
        #expect(try scratch.store.load(hostID: host) == first)
        #expect(try scratch.names() == ["\(host.hex).key"])
    }

    @Test func aDamagedItemsErrorNamesItsFileAndWhatToDo() throws {
        let scratch = KeyStoreScratch()
        try scratch.store.save(try item(host))
        try DamagedKeyStoreFile.garbage.make(in: scratch, hostID: host)
        let error = #expect(throws: SecurityError.self) { _ = try scratch.store.load(hostID: host) }
        #expect(error?.message.contains(scratch.url(host).path) == true)
        #expect(error?.message.contains("move it aside") == true)
    }

    @Test func retiredMarkersAreAVersion1ListBesideTheItems() throws {
        let scratch = KeyStoreScratch()
        try scratch.store.save(try item(host))
        let id = KeyID()
        try scratch.store.markRetired(id, at: KeyTimestamp(millisecondsSinceEpoch: 12))
        #expect(try scratch.store.retiredKeys() == TombstoneList(entries: [id: 12]))
        #expect(try scratch.store.hostIDs() == [host])
        #expect(try scratch.names() == ["\(host.hex).key", FileKeyStore.retiredFileName])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: scratch.store.retiredPath)))
        #expect(TombstoneFormat.parse(bytes) == .list(try TombstoneList(entries: [id: 12]), .version1))
        #expect(try scratch.permissions(URL(fileURLWithPath: scratch.store.retiredPath)) == 0o600)
    }

    @Test func damagedRetiredMarkersStopTheManagerNamingTheFile() throws {
        let scratch = KeyStoreScratch()
        try scratch.store.save(try item(host))
        try Data("\(KeyID().hex) 5\r\n".utf8).write(to: URL(fileURLWithPath: scratch.store.retiredPath))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: scratch.store.retiredPath)
        let error = #expect(throws: SecurityError.self) {
            _ = try KeyManager(store: scratch.store, clock: ManualClock())
        }
        #expect(error?.code == .keyStoreDamaged)
        #expect(error?.message.contains(scratch.store.retiredPath) == true)
    }

    /// The file store with item writes that fail (a full disk for the item only); markers still work.
    struct ItemSavesFail: KeyStore {
        let files: FileKeyStore
        func load(hostID: HostID) throws(SecurityError) -> KeyStoreItem? { try files.load(hostID: hostID) }
        func save(_ item: KeyStoreItem) throws(SecurityError) {
            var failing = files
            failing.writeFault = .write
            try failing.save(item)
        }
        func delete(hostID: HostID) throws(SecurityError) { throw SecurityError(.systemCall, "injected") }
        func hostIDs() throws(SecurityError) -> [HostID] { try files.hostIDs() }
        func retiredKeys() throws(SecurityError) -> TombstoneList { try files.retiredKeys() }
        func markRetired(_ id: KeyID, at instant: KeyTimestamp) throws(SecurityError) {
            try files.markRetired(id, at: instant)
        }
    }

    @Test func aTombstonedKeyWhoseItemSaveFailedIsNotOfferedByTheNextProcess() throws {
        let scratch = KeyStoreScratch()
        let stored = try item(host, keys: 2, start: 1)
        try scratch.store.save(stored)
        let retired = stored.keys[0].id
        let manager = try KeyManager(store: ItemSavesFail(files: scratch.store), clock: ManualClock())
        let retirement = manager.receivedTombstone(for: retired, authenticated: true)
        #expect(retirement.itemFailure?.code == .systemCall)
        #expect(retirement.markerFailure == nil)
        // The file still holds the key ...
        #expect(try scratch.store.load(hostID: host)?.keys.contains { $0.id == retired } == true)
        // ... a restarted process over the real store never offers it ...
        let restarted = try KeyManager(store: scratch.store, clock: ManualClock())
        #expect(restarted.connectOrder(for: host).map(\.id) == [stored.keys[1].id])
        // ... and its next save of the host writes the deletion.
        #expect(restarted.hostListed(host, pending: [], active: [stored.keys[1].id]).saveFailure == nil)
        #expect(try scratch.store.load(hostID: host)?.keys.map(\.id) == [stored.keys[1].id])
    }
}
