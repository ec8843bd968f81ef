import Foundation
import Testing

@_spi(Testing) @testable import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// The one atomic writer: modes, the owner/regular-file check, directory-relative writes, and a failure at
/// every step leaving the previous file whole with no temporary file behind.
@Suite(.serialized) struct AtomicFileTests {
    func mode(_ path: String) throws -> UInt32 {
        var status = stat()
        guard unsafe stat(path, &status) == 0 else { throw IOError(.systemCall, "stat \(path)") }
        return UInt32(status.st_mode) & 0o7777
    }

    func contents(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func names(_ files: TemporaryFiles) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: files.directory.path).sorted()
    }

    /// Runs `body` with the process umask set to `mask` (the suite is serialized; the umask is process-wide).
    func withUmask<R>(_ mask: mode_t, _ body: () throws -> R) rethrows -> R {
        let previous = umask(mask)
        defer { umask(previous) }
        return try body()
    }

    @Test func aNewFileHonoursTheUmask() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = files.path("new")
        try withUmask(0o027) { try AtomicFile.write(Array("hello".utf8), to: path) }
        #expect(try mode(path) == 0o640)
        #expect(try contents(path) == Array("hello".utf8))
    }

    @Test func aReplacedFileKeepsItsMode() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("kept", [1, 2, 3])
        try FileManager.default.setAttributes([.posixPermissions: 0o604], ofItemAtPath: path)
        try withUmask(0o077) { try AtomicFile.write([4, 5], to: path) }
        #expect(try mode(path) == 0o604)
        #expect(try contents(path) == [4, 5])
    }

    @Test func anExactModeIgnoresTheUmaskAndTheOldMode() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("secret", [1])
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        try withUmask(0o022) { try AtomicFile.write([9], to: path, options: .secret) }
        #expect(try mode(path) == 0o600)
        let fresh = files.path("fresh")
        // A umask that keeps other tests' files usable by their owner (the umask is process-wide).
        try withUmask(0o077) {
            try AtomicFile.write([9], to: fresh, options: AtomicFile.Options(permissions: .exactly(0o640)))
        }
        #expect(try mode(fresh) == 0o640)
    }

    @Test func theFirstFormKeepsWorkingWithItsModeLessTheUmask() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = files.path("legacy")
        try withUmask(0o022) { try AtomicFile.write([1, 2], to: path, mode: 0o666) }
        #expect(try mode(path) == 0o644)
    }

    @Test func aSecretWriteRefusesASymbolicLinkOrADirectoryAndLeavesThem() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let target = try files.write("target", [7, 7])
        let link = files.path("link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let linkError = #expect(throws: IOError.self) { try AtomicFile.write([1], to: link, options: .secret) }
        #expect(linkError?.code == .notARegularFile)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try contents(target) == [7, 7])

        let directory = files.path("dir")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let directoryError = #expect(throws: IOError.self) {
            try AtomicFile.write([1], to: directory, options: .secret)
        }
        #expect(directoryError?.code == .notARegularFile)
        #expect(try names(files) == ["dir", "link", "target"])
    }

    @Test(.enabled(if: getuid() == 0, "only root can give a file to another user"))
    func aSecretWriteRefusesAnotherUsersFile() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("theirs", [3])
        try FileManager.default.setAttributes([.ownerAccountID: 4242], ofItemAtPath: path)
        let error = #expect(throws: IOError.self) { try AtomicFile.write([1], to: path, options: .secret) }
        #expect(error?.code == .wrongOwner)
        #expect(try contents(path) == [3])
        // The default options replace it (the caller did not ask for the check).
        try AtomicFile.write([1], to: path)
        #expect(try contents(path) == [1])
    }

    @Test(arguments: [AtomicFile.Fault.write, .fileSync, .rename])
    func aFailureBeforeTheRenameLeavesThePreviousFileWholeAndNoTemporaryFile(_ fault: AtomicFile.Fault) throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let previous = TemporaryFiles.randomBytes(4_096)
        let path = try files.write("data", previous)
        var options = AtomicFile.Options()
        options.fault = fault
        let error = #expect(throws: IOError.self) {
            try AtomicFile.write(TemporaryFiles.randomBytes(8_192), to: path, options: options)
        }
        #expect(error?.code == .systemCall)
        #expect(error?.path != nil)
        #expect(try contents(path) == previous)
        #expect(try names(files) == ["data"])
    }

    @Test func aFailedDirectorySyncIsReportedAfterTheNewContentIsInPlace() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("data", [1])
        var options = AtomicFile.Options()
        options.fault = .directorySync
        #expect(throws: IOError.self) { try AtomicFile.write([2, 2], to: path, options: options) }
        #expect(try contents(path) == [2, 2])
        #expect(try names(files) == ["data"])
    }

    @Test func aWriteRelativeToAnOpenDirectoryUsesTheTemporaryPrefixAndLeavesOneFile() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let directory = unsafe open(files.directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #expect(directory >= 0)
        defer { close(directory) }
        var options = AtomicFile.Options.secret
        options.temporaryPrefix = "item"
        options.fault = .rename
        #expect(throws: IOError.self) {
            try AtomicFile.write(
                [1, 2, 3], named: "item.key", inDirectory: directory, directoryPath: files.directory.path,
                options: options)
        }
        #expect(try names(files).isEmpty)
        options.fault = nil
        try AtomicFile.write(
            [1, 2, 3], named: "item.key", inDirectory: directory, directoryPath: files.directory.path,
            options: options)
        #expect(try names(files) == ["item.key"])
        #expect(try contents(files.path("item.key")) == [1, 2, 3])
        let badName = #expect(throws: IOError.self) {
            try AtomicFile.write(
                [1], named: "../escape", inDirectory: directory, directoryPath: files.directory.path, options: options)
        }
        #expect(badName?.code == .invalidArgument)
    }

    @Test func aMissingDirectoryIsATypedError() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let error = #expect(throws: IOError.self) { try AtomicFile.write([1], to: files.path("missing/file")) }
        #expect(error?.code == .systemCall)
        #expect(error?.errno == ENOENT)
    }
}
