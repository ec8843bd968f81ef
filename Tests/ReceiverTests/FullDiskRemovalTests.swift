import AetherIO
import AetherReceiver
import Foundation
import Testing

/// A store whose disk is full can still free space: the expiry sweep and a cancel remove open uploads although the
/// catalogue cannot grow. Both used to write the catalogue first, fail with "database or disk is full" and delete
/// nothing, so the store stayed full (and every upload refused with 507) until an operator stepped in.
@Suite struct FullDiskRemovalTests {
    /// A store on a small tmpfs, filled to the last byte once it holds open uploads.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func theSweepAndACancelFreeAFullDisk() throws {
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-full-\(getpid())-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        try Self.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint])
        defer { try? Self.run("/usr/bin/umount", [mountPoint]) }
        try Self.fillAndFree(in: mountPoint)
    }

    /// The body of the tmpfs test; the engine is gone when it returns, so the file system can be unmounted.
    private static func fillAndFree(in mountPoint: String) throws {
        let store = FilePath(mountPoint + "/store")
        var limits = EngineFixture.smallLimits
        limits.maximumOpenUploadsPerClient = 100_000
        let engine = try UploadEngine(directory: store, limits: limits)
        let alice = ClientIdentity("alice")
        // Open uploads holding half of their bytes each, until the store has no room for another.
        var open: [UploadID] = []
        while open.count < 32 {
            let part = EngineFixture.bytes(512 * 1024, seed: UInt64(open.count + 1))
            let record: UploadRecord
            do {
                record = try engine.create(NewUpload(uploadProtocol: .tus, size: 2 * Int64(part.count)), owner: alice)
                let sink = try engine.openAppend(record.id, offset: 0, owner: alice)
                try sink.write(part)
                _ = try sink.finish()
            } catch {
                break
            }
            open.append(record.id)
        }
        #expect(open.count >= 3)
        // The last byte taken by another file: nothing the receiver writes fits now.
        let filler = FileHandle(forWritingAtPath: try Self.create(mountPoint + "/filler"))
        let block = Data(count: 64 * 1024)
        while (try? filler?.write(contentsOf: block)) != nil {}
        let single = Data(count: 1)
        while (try? filler?.write(contentsOf: single)) != nil {}
        try filler?.close()
        // Creations (catalogue rows only) fit where SQLite's files have room left, then the catalogue is full too.
        var refused: ReceiverError?
        var empty: [UploadID] = []
        while refused == nil, empty.count < 10_000 {
            do {
                empty.append(try engine.create(NewUpload(uploadProtocol: .tus, size: 10), owner: alice).id)
            } catch {
                refused = error
            }
        }
        #expect(refused?.isOutOfSpace == true, "\(String(describing: refused))")
        let before = try Self.freeBytes(mountPoint)

        // A cancel of one of them frees its bytes and records it gone.
        let cancelled = try #require(open.first)
        try engine.cancel(cancelled, owner: alice)
        #expect(receiverError { _ = try engine.status(cancelled, owner: alice) }?.code == .expired)
        #expect(try engine.blobs.size(of: .stream(cancelled)) == nil)
        #expect(try Self.freeBytes(mountPoint) > before)

        // The sweep past their expiry removes the rest, each recorded expired with no bytes left.
        // Uploads whose removal finds no room (those without bytes, swept before any room was made) stay for the next
        // round, which removes them too; a round reports the first such failure after removing what it could.
        let later = Int64(Date().timeIntervalSince1970) + 10 * limits.expirySeconds
        var rounds = 0
        var clean = false
        while !clean, rounds < 3 {
            rounds += 1
            do {
                _ = try engine.expire(now: later)
                clean = true
            } catch {
                #expect(error.isOutOfSpace, "\(error)")
            }
        }
        #expect(clean)
        for id in open.dropFirst() + empty {
            #expect(receiverError { _ = try engine.status(id, owner: alice) }?.code == .expired)
            #expect(try engine.blobs.size(of: .stream(id)) == nil)
        }
        #expect(try Self.freeBytes(mountPoint) >= before + Int64(open.count - 1) * 512 * 1024)
        // Room again: a new upload is taken.
        let next = try engine.create(NewUpload(uploadProtocol: .tus, size: 10), owner: alice)
        #expect(try engine.status(next.id, owner: alice).offset == 0)
    }

    private static func create(_ path: String) throws -> String {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw ReceiverError(.storageFailed, "cannot create \(path)")
        }
        return path
    }

    private static func freeBytes(_ path: String) throws -> Int64 {
        let attributes = try FileManager.default.attributesOfFileSystem(forPath: path)
        return (attributes[.systemFreeSize] as? NSNumber)?.int64Value ?? 0
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
