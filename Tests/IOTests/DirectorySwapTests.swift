import Foundation
import Testing

@testable import AetherIO

/// Switching a directory set in whole, including the two-rename fallback when a step of it fails.
@Suite struct DirectorySwapTests {
    /// A target set (`set/` with `a`) and a staged one beside it (with `b`).
    private func sets(_ files: TemporaryFiles) throws -> (target: FilePath, staged: FilePath) {
        let target = FilePath(files.path("set"))
        try FileManager.default.createDirectory(atPath: target.description, withIntermediateDirectories: false)
        try Data([1]).write(to: URL(fileURLWithPath: target.appending("a").description))
        let staged = try DirectorySwap.makeStagingDirectory(besides: target)
        try Data([2]).write(to: URL(fileURLWithPath: staged.appending("b").description))
        return (target, staged)
    }

    private func names(_ path: FilePath) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path.description).sorted()
    }

    @Test func theSwitchPutsTheNewSetInPlaceAndReturnsTheOldOne() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let (target, staged) = try sets(files)
        let previous = try #require(try DirectorySwap.replace(target, with: staged))
        #expect(try names(target) == ["b"])
        #expect(try names(previous) == ["a"])
    }

    @Test func whenTheNewSetCannotBeMovedInTheOldOneIsPutBack() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let (target, staged) = try sets(files)
        let error = #expect(throws: IOError.self) {
            try DirectorySwap.replace(
                target, with: staged, exchange: { (_, _) throws(IOError) in false },
                rename: { (from, to) throws(IOError) in
                    if from == staged { throw IOError(.systemCall, "simulated: rename refused", errno: EIO) }
                    try Syscall.rename(from, to: to)
                })
        }
        #expect(error?.message == "simulated: rename refused")
        #expect(try names(target) == ["a"])
        #expect(try names(staged) == ["b"])
        #expect(try names(FilePath(files.directory.path)).filter { $0.contains(".aether-old-") }.isEmpty)
    }

    @Test func whenTheOldSetCannotBePutBackEitherTheErrorNamesTheDirectoryThatHoldsIt() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let (target, staged) = try sets(files)
        var moves = 0
        let error = #expect(throws: IOError.self) {
            try DirectorySwap.replace(
                target, with: staged, exchange: { (_, _) throws(IOError) in false },
                rename: { (from, to) throws(IOError) in
                    moves += 1
                    // Only the first move (the old set aside) succeeds.
                    guard moves == 1 else { throw IOError(.systemCall, "simulated failure \(moves)", errno: EIO) }
                    try Syscall.rename(from, to: to)
                })
        }
        #expect(moves == 3)
        let backups = try names(FilePath(files.directory.path)).filter { $0.contains(".aether-old-") }
        #expect(backups.count == 1)
        let backup = FilePath(files.directory.path).appending(try #require(backups.first))
        // The old set is whole in the backup, and the error says so.
        #expect(try names(backup) == ["a"])
        #expect(error?.path == backup.description)
        #expect(error?.message.contains(backup.description) == true)
        #expect(error?.message.contains("simulated failure 2") == true)
        #expect(error?.message.contains("simulated failure 3") == true)
        #expect(!FileManager.default.fileExists(atPath: target.description))
    }

    /// The process id of a process that has exited (and was reaped): no process has it now.
    private func exitedProcessID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test func stagingLeftByAKilledWriterIsRemovedAndALiveWritersIsKept() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let target = FilePath(files.path("set"))
        let manager = FileManager.default
        let dead = files.path(".set.aether-new-\(try exitedProcessID())-0123456789ab")
        let live = files.path(".set.aether-new-\(getpid())-0123456789ab")
        let nested = files.path(".set.aether-new-\(try exitedProcessID())-ba9876543210")
        let unrelated = files.path(".set.aether-new-notapid-0123456789ab")
        for directory in [dead, live, nested, unrelated] {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: false)
            try Data([7]).write(to: URL(fileURLWithPath: directory + "/shard-00000.bin"))
        }
        try manager.createDirectory(atPath: nested + "/inner", withIntermediateDirectories: false)

        #expect(
            DirectorySwap.abandonedStagingDirectories(besides: target).map(\.description).sorted()
                == [dead, nested].sorted())
        let staged = try DirectorySwap.makeStagingDirectory(besides: target)

        #expect(!manager.fileExists(atPath: dead))
        #expect(manager.fileExists(atPath: live + "/shard-00000.bin"))
        #expect(manager.fileExists(atPath: unrelated + "/shard-00000.bin"))
        // Nothing is removed recursively: a directory inside keeps the abandoned staging.
        #expect(manager.fileExists(atPath: nested + "/inner"))
        #expect(staged.lastComponent.description.hasPrefix(".set.aether-new-\(getpid())-"))
    }
}
