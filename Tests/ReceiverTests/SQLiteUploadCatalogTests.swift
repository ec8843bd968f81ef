import AetherIO
import AetherReceiver
import Foundation
import Testing

@Suite struct SQLiteUploadCatalogTests {
    private func record(_ id: UploadID) -> UploadRecord {
        UploadRecord(
            id: id, owner: ClientIdentity("alice"), uploadProtocol: .tus, state: .open, size: 10, chunkSize: 0,
            chunks: 0, chainSessionID: nil, contentID: nil, parity: nil,
            metadata: ["filename": Array("a\u{0}b".utf8), "empty": []], expectedSHA256: SHA256.hash([1]),
            concatenation: .partial, offset: 3, chainVerifiedThrough: -1, chainLink: nil, createdAt: 5, updatedAt: 6)
    }

    @Test func recordsSurviveReopeningAndTheSchemaIsVersioned() throws {
        let fixture = try EngineFixture()
        let path = fixture.directory.appending("other.sqlite3")
        let id = try UploadID("ccccccccccccccccccccccccca")
        do {
            let catalog = try SQLiteUploadCatalog(path: path)
            try catalog.insert(record(id))
            #expect(receiverError { try catalog.insert(record(id)) }?.code == .storageFailed)
        }
        let reopened = try SQLiteUploadCatalog(path: path)
        #expect(try reopened.record(id) == record(id))
        #expect(try reopened.openUploadCount(owner: ClientIdentity("alice")) == 1)
        #expect(try reopened.auditLog(id).map(\.event) == ["created tus"])
        #expect(try reopened.integrityCheck())
    }

    @Test func aCatalogueWhoseNameIsNotUTF8OpensUnderThatExactName() throws {
        let fixture = try EngineFixture()
        let name = try FilePath(bytes: Array("catalog-".utf8) + [0xff, 0xfe] + Array(".sqlite3".utf8))
        let path = fixture.directory.appending(name)
        let id = try UploadID("ccccccccccccccccccccccccca")
        try SQLiteUploadCatalog(path: path).insert(record(id))
        #expect(try SQLiteUploadCatalog(path: path).record(id) == record(id))
        // The file exists under the raw bytes, not under a name with U+FFFD in their place.
        #expect(try Syscall.stat(path).isRegularFile)
        #expect(
            !FileManager.default.fileExists(atPath: fixture.directory.description + "/catalog-\u{fffd}\u{fffd}.sqlite3")
        )
    }

    /// A catalogue of schema version 1 (before possession challenges were shared) is migrated in place: its
    /// records stay and challenges can be kept and taken once.
    @Test func aVersionOneCatalogueIsMigratedAndKeepsItsRecords() throws {
        let fixture = try EngineFixture()
        let path = fixture.directory.appending("old.sqlite3")
        let id = try UploadID("ddddddddddddddddddddddddda")
        try SQLiteUploadCatalog(path: path).insert(record(id))
        let raw = Process()
        raw.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        raw.arguments = [
            "python3", "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DROP TABLE possession'); "
                + "c.execute('PRAGMA user_version=1'); c.commit()",
            path.description,
        ]
        try raw.run()
        raw.waitUntilExit()
        #expect(raw.terminationStatus == 0)
        let migrated = try SQLiteUploadCatalog(path: path)
        #expect(try migrated.record(id) == record(id))
        try migrated.recordPossessionChallenge(
            id, nonce: [1, 2], challenge: [9, 9, 9], issuedAt: 1000, expiredBefore: 0)
        #expect(try migrated.takePossessionChallenge(id, nonce: [1, 2]) == [9, 9, 9])
        #expect(try migrated.takePossessionChallenge(id, nonce: [1, 2]) == nil)
    }

    @Test func aCatalogueFromANewerSchemaOrNotSQLiteIsRefused() throws {
        let fixture = try EngineFixture()
        let newer = fixture.directory.appending("newer.sqlite3")
        _ = try SQLiteUploadCatalog(path: newer)
        // Raise the version as a newer receiver would.
        let raw = Process()
        raw.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        raw.arguments = [
            "python3", "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=4'); c.commit()",
            newer.description,
        ]
        try raw.run()
        raw.waitUntilExit()
        #expect(raw.terminationStatus == 0)
        #expect(receiverError { _ = try SQLiteUploadCatalog(path: newer) }?.code == .storageFailed)

        let garbage = fixture.directory.appending("garbage.sqlite3")
        try AtomicFile.write([UInt8](repeating: 0x41, count: 4096), to: garbage)
        #expect(receiverError { _ = try SQLiteUploadCatalog(path: garbage) }?.code == .storageFailed)
    }
}
