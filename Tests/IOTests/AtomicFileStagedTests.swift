import Foundation
import Testing

@_spi(Testing) @testable import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// The streaming form of the one atomic writer (`AtomicFile.Staged`). An extension of `AtomicFileTests`, so
/// that it runs serialized with the other tests that set the process-wide umask.
extension AtomicFileTests {
    /// Bytes written at offsets out of order and read back, the target untouched until the commit.
    @Test func aStagedFileReplacesTheTargetWholeAndOnlyAtTheCommit() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let previous = TemporaryFiles.randomBytes(1_000)
        let path = try files.write("rebuilt.bin", previous)
        let new = TemporaryFiles.randomBytes(300_000)
        let staged = try AtomicFile.Staged(replacing: FilePath(path))
        try staged.truncate(to: Int64(new.count))
        // The second half first, as a decoder that fills stripes in any order would.
        try staged.write(new[150_000...], at: 150_000)
        try staged.write(new[..<150_000], at: 0)
        var readBack = [UInt8](repeating: 0, count: new.count + 10)
        let got = try unsafe readBack.withUnsafeMutableBytes { try unsafe staged.read(at: 0, into: $0) }
        #expect(got == new.count)
        #expect(SHA256.hash(readBack[..<got]) == SHA256.hash(new))
        // Nothing has reached the target; the staged bytes sit in one hidden temporary file beside it.
        #expect(try contents(path) == previous)
        let before = try names(files)
        #expect(before.count == 2)
        #expect(before.contains { $0.hasPrefix(".rebuilt.bin.") && $0.hasSuffix(".tmp") })
        #expect(staged.temporaryPath.hasPrefix(files.directory.path + "/.rebuilt.bin."))
        try staged.commit()
        #expect(try contents(path) == new)
        #expect(try names(files) == ["rebuilt.bin"])
        // Committed: the staged file is gone, so a late write cannot reach the target.
        let late = #expect(throws: IOError.self) { try staged.write([1], at: 0) }
        #expect(late?.code == .invalidArgument)
        #expect(try contents(path) == new)
    }

    @Test func aDiscardedOrDroppedStagedFileLeavesTheTargetAndNoTemporaryFile() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let previous = TemporaryFiles.randomBytes(2_000)
        let path = try files.write("data", previous)
        let staged = try AtomicFile.Staged(replacing: FilePath(path))
        try staged.write(TemporaryFiles.randomBytes(5_000), at: 0)
        staged.discard()
        #expect(try names(files) == ["data"])
        let error = #expect(throws: IOError.self) { try staged.commit() }
        #expect(error?.code == .invalidArgument)
        #expect(try contents(path) == previous)

        // Never committed nor discarded: the temporary file goes with the last reference.
        func stageAndForget() throws {
            let forgotten = try AtomicFile.Staged(replacing: FilePath(path))
            try forgotten.write([9, 9, 9], at: 0)
            #expect(try names(files).count == 2)
        }
        try stageAndForget()
        #expect(try names(files) == ["data"])
        #expect(try contents(path) == previous)
    }

    @Test func anErrorThrownWhileStagingLeavesTheTargetAsItWasAndNoTemporaryFile() throws {
        struct Abandoned: Error {}
        let files = try TemporaryFiles()
        defer { files.remove() }
        let previous = TemporaryFiles.randomBytes(4_096)
        let path = try files.write("out", previous)
        func stageThenFail() throws {
            let staged = try AtomicFile.Staged(replacing: FilePath(path))
            try staged.write(TemporaryFiles.randomBytes(8_192), at: 0)
            throw Abandoned()  // as a decoder throws when the staged bytes do not match their digest
        }
        #expect(throws: Abandoned.self) { try stageThenFail() }
        #expect(try contents(path) == previous)
        #expect(try names(files) == ["out"])
        // A new target is not created either.
        func stageNewThenFail() throws {
            let staged = try AtomicFile.Staged(replacing: FilePath(files.path("fresh")))
            try staged.write([1, 2, 3], at: 0)
            throw Abandoned()
        }
        #expect(throws: Abandoned.self) { try stageNewThenFail() }
        #expect(try names(files) == ["out"])
    }

    @Test func aStagedFileFollowsTheModeRulesOfTheBufferForm() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        func stage(_ name: String, _ options: AtomicFile.Options = AtomicFile.Options()) throws -> String {
            let path = files.path(name)
            let staged = try AtomicFile.Staged(replacing: FilePath(path), options: options)
            try staged.write([1, 2, 3], at: 0)
            try staged.commit()
            return path
        }
        // A new file honours the umask.
        #expect(try mode(withUmask(0o027) { try stage("new") }) == 0o640)
        // A replaced file keeps its mode, whatever the umask.
        let kept = try files.write("kept", [0])
        try FileManager.default.setAttributes([.posixPermissions: 0o604], ofItemAtPath: kept)
        #expect(try mode(withUmask(0o077) { try stage("kept") }) == 0o604)
        // Exactly: the umask and the old mode do not matter.
        let secret = try files.write("secret", [0])
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: secret)
        #expect(try mode(withUmask(0o022) { try stage("secret", .secret) }) == 0o600)
        #expect(
            try mode(withUmask(0o077) { try stage("exact", AtomicFile.Options(permissions: .exactly(0o640))) })
                == 0o640)
        // Umasked: these bits less the umask, also when a file is replaced.
        #expect(
            try mode(withUmask(0o022) { try stage("kept", AtomicFile.Options(permissions: .umasked(0o666))) })
                == 0o644)
        #expect(try contents(files.path("kept")) == [1, 2, 3])
    }

    @Test(arguments: [AtomicFile.Fault.write, .fileSync, .rename])
    func anInjectedFaultLeavesThePreviousFileWholeAndRemovesTheStagedFileAtOnce(_ fault: AtomicFile.Fault) throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let previous = TemporaryFiles.randomBytes(4_096)
        let path = try files.write("data", previous)
        var options = AtomicFile.Options()
        options.fault = fault
        let staged = try AtomicFile.Staged(replacing: FilePath(path), options: options)
        let error = #expect(throws: IOError.self) {
            try staged.write(TemporaryFiles.randomBytes(8_192), at: 0)
            try staged.commit()
        }
        #expect(error?.code == .systemCall)
        #expect(error?.errno == (fault == .write ? ENOSPC : EIO))
        // Removed when the call failed, not only when the last reference goes.
        #expect(try names(files) == ["data"])
        #expect(try contents(path) == previous)
        // A staged file whose call failed cannot be committed afterwards.
        let again = #expect(throws: IOError.self) { try staged.commit() }
        #expect(again?.code == .invalidArgument)
        #expect(try contents(path) == previous)
    }

    @Test func anInjectedDirectorySyncFaultIsReportedWithTheNewContentInPlace() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("data", [1])
        var options = AtomicFile.Options()
        options.fault = .directorySync
        let staged = try AtomicFile.Staged(replacing: FilePath(path), options: options)
        try staged.write([2, 2], at: 0)
        let error = #expect(throws: IOError.self) { try staged.commit() }
        #expect(error?.path == files.directory.path)
        #expect(try contents(path) == [2, 2])
        #expect(try names(files) == ["data"])
    }

    /// `.replaceOwnRegularFile` is checked when staging starts and again at the commit: a symbolic link put at
    /// the target's name while the file was staged is refused and left as it is.
    @Test func aSecretStagedFileRefusesALinkPutInPlaceOfTheTargetBeforeTheCommit() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let elsewhere = try files.write("elsewhere", [7])
        let link = files.path("item")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: elsewhere)
        let refused = #expect(throws: IOError.self) {
            try AtomicFile.Staged(replacing: FilePath(link), options: .secret)
        }
        #expect(refused?.code == .notARegularFile)
        #expect(try names(files) == ["elsewhere", "item"])

        try FileManager.default.removeItem(atPath: link)
        let staged = try AtomicFile.Staged(replacing: FilePath(link), options: .secret)
        try staged.write([1, 2, 3], at: 0)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: elsewhere)
        let late = #expect(throws: IOError.self) { try staged.commit() }
        #expect(late?.code == .notARegularFile)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == elsewhere)
        #expect(try contents(elsewhere) == [7])
        #expect(try names(files) == ["elsewhere", "item"])
    }

    /// The directory-relative form keeps its own copy of the descriptor: the caller may close its own.
    @Test func aStagedFileInAnOpenDirectoryOutlivesTheCallersDescriptor() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let directory = unsafe open(files.directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #expect(directory >= 0)
        var options = AtomicFile.Options.secret
        options.temporaryPrefix = "prefix"
        let staged = try AtomicFile.Staged(
            named: FilePath("item.key"), inDirectory: directory, directoryPath: files.directory.path, options: options)
        close(directory)
        #expect(try names(files).contains { $0.hasPrefix(".prefix.") && $0.hasSuffix(".tmp") })
        try staged.write([4, 5, 6], at: 0)
        try staged.commit()
        #expect(try names(files) == ["item.key"])
        #expect(try contents(files.path("item.key")) == [4, 5, 6])
        #expect(try mode(files.path("item.key")) == 0o600)
        let badName = #expect(throws: IOError.self) {
            try AtomicFile.Staged(replacing: FilePath(files.directory.path + "/.."))
        }
        #expect(badName?.code == .invalidArgument)
    }
}
