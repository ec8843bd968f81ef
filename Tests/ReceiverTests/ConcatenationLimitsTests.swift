import AetherIO
import AetherReceiver
import Foundation
import Testing

/// tus concatenation cannot be made to write more than the partials a client stored (each named once), and a final
/// that fails releases what it held.
@Suite struct ConcatenationLimitsTests {
    private static func partial(_ fixture: EngineFixture, _ bytes: [UInt8]) throws -> UploadID {
        let record = try fixture.engine.create(
            NewUpload(uploadProtocol: .tus, size: Int64(bytes.count), concatenation: .partial), owner: fixture.alice)
        try fixture.append(bytes, to: record.id, at: 0)
        return record.id
    }

    @Test(arguments: CatalogueKind.allCases) func aFinalNamingOnePartialTwiceIsRefusedAndWritesNothing(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let first = try Self.partial(fixture, EngineFixture.bytes(5000, seed: 1))
        let second = try Self.partial(fixture, EngineFixture.bytes(3000, seed: 2))
        let before = try fixture.storeSnapshot()
        for names in [[first, first], [first, second, first], [second, second, second]] {
            let error = receiverError {
                _ = try fixture.engine.create(
                    NewUpload(uploadProtocol: .tus, concatenation: .final(names)), owner: fixture.alice)
            }
            #expect(error?.code == .malformedRequest)
            #expect(error?.message.contains("more than once") == true)
        }
        #expect(try fixture.storeSnapshot() == before)
        #expect(try fixture.engine.catalog.openUploadCount(owner: fixture.alice) == 0)
        // Each partial named once is a final as before, and a partial may join another final too.
        let joined = try fixture.engine.create(
            NewUpload(uploadProtocol: .tus, concatenation: .final([second, first])), owner: fixture.alice)
        let again = try fixture.engine.create(
            NewUpload(uploadProtocol: .tus, concatenation: .final([first])), owner: fixture.alice)
        #expect(
            try fixture.objectBytes(joined.id) == EngineFixture.bytes(3000, seed: 2)
                + EngineFixture.bytes(5000, seed: 1))
        #expect(try fixture.objectBytes(again.id) == EngineFixture.bytes(5000, seed: 1))
    }

    /// A store on a small tmpfs: the final's copy runs out of space part way.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aFinalThatRunsOutOfSpaceIsRemovedHoldsNoSlotAndLeavesItsPartialsWhole() throws {
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-enospc-\(getpid())-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        try Self.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint])
        defer { try? Self.run("/usr/bin/umount", [mountPoint]) }
        try Self.fillAndFail(in: FilePath(mountPoint))
    }

    /// The body of the tmpfs test; the engine is gone when it returns, so the file system can be unmounted.
    private static func fillAndFail(in directory: FilePath) throws {
        var limits = EngineFixture.smallLimits
        limits.maximumOpenUploadsPerClient = 1
        let engine = try UploadEngine(directory: directory, limits: limits)
        let alice = ClientIdentity("alice")
        let parts = [EngineFixture.bytes(1_500_000, seed: 11), EngineFixture.bytes(1_500_000, seed: 12)]
        var partials: [UploadID] = []
        for part in parts {
            let record = try engine.create(
                NewUpload(uploadProtocol: .tus, size: Int64(part.count), concatenation: .partial), owner: alice)
            let sink = try engine.openAppend(record.id, offset: 0, owner: alice, length: Int64(part.count))
            try sink.write(part)
            #expect(try sink.finish().completed)
            partials.append(record.id)
        }
        let failure = receiverError {
            _ = try engine.create(NewUpload(uploadProtocol: .tus, concatenation: .final(partials)), owner: alice)
        }
        #expect(failure?.code == .storageFailed)
        #expect(failure?.errno == ENOSPC)
        // The failed final holds no slot (the only one: a new upload can be created), is removed, and left no bytes.
        #expect(try engine.catalog.openUploadCount(owner: alice) == 0)
        let finals = try engine.catalog.uploads(in: [.open, .complete, .failed, .expired]).filter {
            if case .final = $0.concatenation { true } else { false }
        }
        #expect(finals.count == 1)
        #expect(finals.first?.state == .expired)
        if let final = finals.first {
            #expect(try engine.blobs.size(of: .object(final.id)) == nil)
            #expect(receiverError { _ = try engine.status(final.id, owner: alice) }?.code == .expired)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.description + "/staging").isEmpty)
        for (id, part) in zip(partials, parts) {
            #expect(try engine.status(id, owner: alice).isComplete)
            #expect(try engine.blobs.readAll(.object(id), expectedLength: part.count) == part)
        }
        let next = try engine.create(NewUpload(uploadProtocol: .tus, size: 10), owner: alice)
        try engine.cancel(next.id, owner: alice)
        // With room again (one partial fewer), a final of the other is whole.
        try engine.cancel(partials[1], owner: alice)
        let final = try engine.create(
            NewUpload(uploadProtocol: .tus, concatenation: .final([partials[0]])), owner: alice)
        #expect(try engine.blobs.readAll(.object(final.id), expectedLength: parts[0].count) == parts[0])
    }

    private static func run(_ program: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ReceiverError(.storageFailed, "\(program) \(arguments.joined(separator: " ")) failed")
        }
    }
}
