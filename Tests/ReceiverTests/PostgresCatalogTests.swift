import AetherIO
import AetherReceiver
import AetherTestServers
import Foundation
import Testing

/// The PostgreSQL catalogue on its own and as the shared catalogue of two receivers (two engines, each with its
/// own `PostgresCatalog` and so its own connections, over one blob directory, as a fleet shares one bucket).
@Suite struct PostgresCatalogTests {
    private func record(_ id: UploadID) -> UploadRecord {
        UploadRecord(
            id: id, owner: ClientIdentity("alice"), uploadProtocol: .tus, state: .open, size: 10, chunkSize: 0,
            chunks: 0, chainSessionID: nil, contentID: nil, parity: nil,
            metadata: ["filename": Array("a\u{0}b".utf8), "empty": []], expectedSHA256: SHA256.hash([1]),
            concatenation: .partial, offset: 3, chainVerifiedThrough: -1, chainLink: nil, createdAt: 5, updatedAt: 6)
    }

    /// Two receivers sharing one PostgreSQL database and one blob directory.
    private struct Fleet {
        let fixture: EngineFixture
        let first: UploadEngine
        let second: UploadEngine

        /// Blobs in one directory (`sharedBlobs`), or the second receiver's in a directory of its own (native
        /// chunks are written in place into one file per upload, which two processes cannot share).
        init(sharedBlobs: Bool = true) throws {
            fixture = try EngineFixture(catalogue: .postgres)
            let url = try #require(fixture.postgresURL)
            first = fixture.engine
            let root = sharedBlobs ? fixture.directory : fixture.directory.appending("second")
            second = UploadEngine(
                blobs: try DirectoryBlobStore(root: root), catalog: try PostgresCatalog(url: url),
                limits: fixture.limits, clock: fixture.clock)
        }
    }

    @Test func recordsSurviveReconnectingAndTheSchemaIsVersioned() throws {
        let url = try PostgresTestServer.sharedDatabase()
        let id = try UploadID("ccccccccccccccccccccccccca")
        do {
            let catalog = try PostgresCatalog(url: url)
            try catalog.insert(record(id))
            #expect(receiverError { try catalog.insert(record(id)) }?.code == .storageFailed)
        }
        let reopened = try PostgresCatalog(url: url)
        #expect(try reopened.record(id) == record(id))
        #expect(try reopened.openUploadCount(owner: ClientIdentity("alice")) == 1)
        #expect(try reopened.auditLog(id).map(\.event) == ["created tus"])
        #expect(try reopened.integrityCheck())
        #expect(PostgresCatalog.schemaVersion == 3)
    }

    @Test func aSchemaNewerThanTheReceiverIsRefusedWithATypedError() throws {
        let server = try PostgresTestServer.shared.get()
        let url = try server.createDatabase()
        _ = try PostgresCatalog(url: url)
        let database = try #require(url.split(separator: "?").first?.split(separator: "/").last.map(String.init))
        try server.psql(database, "INSERT INTO schema_migrations (version) VALUES (7)")
        let error = receiverError { _ = try PostgresCatalog(url: url) }
        #expect(error?.code == .schemaTooNew)
        #expect(error?.message.contains("schema version 7, this receiver knows 3") == true)
    }

    @Test func anUnreachableServerAMissingDatabaseAndABadURLNameTheCauseButNeverThePassword() throws {
        let server = try PostgresTestServer.shared.get()
        let nowhere = receiverError {
            _ = try PostgresCatalog(url: "postgresql://alice:s3cret-pw@/db?host=/nonexistent-aether-socket-dir")
        }
        #expect(nowhere?.code == .unavailable)
        #expect(nowhere?.message.contains("unreachable") == true)
        #expect(nowhere?.message.contains("s3cret-pw") == false)
        let missing = receiverError { _ = try PostgresCatalog(url: server.url(database: "aether_no_such_db")) }
        #expect(missing?.code == .unavailable)
        #expect(missing?.message.contains("missing") == true)
        let malformed = receiverError { _ = try PostgresCatalog(url: "postgres://u:s3cret-pw@host/db?nonsense=1") }
        #expect(malformed?.code == .malformedRequest)
        #expect(malformed?.message.contains("s3cret-pw") == false)
    }

    @Test func twoReceiversRacingForOneChunkRecordItOnceAndTheLoserGetsTheStoredReceipt() async throws {
        let fleet = try Fleet(sharedBlobs: false)
        let content = fleet.fixture.native(4 * EngineFixture.chunkSize)
        let record = try fleet.first.create(content.newUpload, owner: fleet.fixture.alice)
        let owner = fleet.fixture.alice
        for index in 0..<4 {
            // Both receivers pass the open check (no receipt yet), then finish at once.
            let sinks = try [fleet.first, fleet.second].map { engine in
                let sink = try engine.openChunk(
                    record.id, index: index, descriptor: content.descriptor(index), owner: owner)
                try sink.write(content.chunks[index])
                return sink
            }
            let outcomes = try await withThrowingTaskGroup(of: ChunkOutcome.self) { group in
                for sink in sinks { group.addTask { try sink.finish() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.sorted { "\($0)" < "\($1)" } == [.alreadyStored, .stored])
        }
        let receipts = try fleet.second.catalog.chunkReceipts(record.id)
        #expect(receipts.map(\.index) == [0, 1, 2, 3])
        #expect(receipts.map(\.sha256) == content.hashes)
        #expect(try fleet.second.status(record.id, owner: owner).record.chainVerifiedThrough == 3)
    }

    @Test func twoReceiversAppendingAtOneOffsetAtOnceExactlyOneWinsAndTheOtherLearnsTheOffset() async throws {
        let fleet = try Fleet()
        let owner = fleet.fixture.alice
        let bytes = EngineFixture.bytes(64)
        let record = try fleet.first.create(NewUpload(uploadProtocol: .ietf, size: 64), owner: owner)
        for round in 0..<4 {
            let offset = Int64(round * 16)
            let piece = Array(bytes[Int(offset)..<Int(offset) + 16])
            let sinks = try [fleet.first, fleet.second].map { engine in
                let sink = try engine.openAppend(
                    record.id, offset: offset, owner: owner, length: 16, completes: round == 3 ? true : nil)
                try sink.write(piece)
                return sink
            }
            let results = await withTaskGroup(of: Result<AppendResult, ReceiverError>.self) { group in
                for sink in sinks {
                    group.addTask {
                        do throws(ReceiverError) { return .success(try sink.finish()) } catch { return .failure(error) }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let won = results.compactMap { try? $0.get() }
            let lost = results.compactMap { result -> ReceiverError? in
                if case .failure(let error) = result { return error }
                return nil
            }
            #expect(won.count == 1)
            #expect(won.first?.offset == offset + 16)
            #expect(lost.count == 1)
            #expect(lost.first?.code == .offsetMismatch)
            #expect(lost.first?.offset == offset + 16)
        }
        #expect(try fleet.second.status(record.id, owner: owner).record.state == .complete)
        #expect(try fleet.fixture.objectBytes(record.id) == bytes)
    }

    @Test func expiryRunsOnOneReceiverAtATime() throws {
        let fleet = try Fleet()
        let record = try fleet.first.create(NewUpload(uploadProtocol: .tus, size: 10), owner: fleet.fixture.alice)
        let later = fleet.fixture.clock.wallWholeSeconds() + fleet.fixture.limits.expirySeconds + 1
        var skipped: [UploadID] = [record.id]
        var secondRan = true
        let ran = try fleet.first.catalog.exclusively("expiry") { () throws(ReceiverError) in
            skipped = try fleet.second.expire(now: later)
            secondRan = try fleet.second.catalog.exclusively("expiry") { () throws(ReceiverError) in }
        }
        #expect(ran)
        #expect(!secondRan)
        #expect(skipped.isEmpty)
        #expect(try fleet.second.expire(now: later) == [record.id])
    }

    @Test func aRowLockHeldPastTheStatementTimeoutIsUnavailableNotAHang() throws {
        let fleet = try Fleet()
        let url = try #require(fleet.fixture.postgresURL)
        let impatient = try PostgresCatalog(
            PostgresCatalog.Configuration(url: url, poolSize: 2, statementTimeoutMilliseconds: 200))
        let record = try fleet.first.create(NewUpload(uploadProtocol: .tus, size: 10), owner: fleet.fixture.alice)
        let blocked = receiverError {
            try fleet.first.catalog.serialized(record.id) { () throws(ReceiverError) in
                try impatient.serialized(record.id) { () throws(ReceiverError) in }
            }
        }
        #expect(blocked?.code == .unavailable)
        #expect(blocked?.code.status == 503)
        #expect(blocked?.message.contains("statement_timeout") == true)
        // Released: it runs.
        #expect(try impatient.serialized(record.id) { () throws(ReceiverError) in 42 } == 42)
    }

    @Test func aRestartedServerAnswersUnavailableThenReconnectsAndLosesNothingAcknowledged() throws {
        let server = try PostgresTestServer()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aether-pg-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            try? server.stop()
        }
        let engine = UploadEngine(
            blobs: try DirectoryBlobStore(root: FilePath(directory)),
            catalog: try PostgresCatalog(url: try server.createDatabase()), limits: EngineFixture.smallLimits)
        let owner = ClientIdentity("alice")
        let content = EngineFixture.NativeContent(
            bytes: EngineFixture.bytes(3 * EngineFixture.chunkSize), chunkSize: EngineFixture.chunkSize,
            session: "restart")
        let record = try engine.create(content.newUpload, owner: owner)
        func send(_ index: Int) throws -> ChunkOutcome {
            let sink = try engine.openChunk(
                record.id, index: index, descriptor: content.descriptor(index), owner: owner)
            try sink.write(content.chunks[index])
            return try sink.finish()
        }
        #expect(try send(0) == .stored)
        try server.stop()
        for _ in 0..<3 {
            let outage = receiverError { _ = try send(1) }
            #expect(outage?.code == .unavailable, "\(outage?.message ?? "no error")")
            #expect(outage?.code.status == 503)
        }
        try server.start()
        #expect(try send(1) == .stored)
        #expect(try send(2) == .stored)
        #expect(try engine.catalog.chunkReceipts(record.id).map(\.index) == [0, 1, 2])
        _ = try engine.complete(record.id, owner: owner, claim: content.claim)
        let object = try Data(contentsOf: URL(fileURLWithPath: directory + "/objects/" + record.id.rawValue))
        #expect(Array(object) == content.bytes)
    }
}
