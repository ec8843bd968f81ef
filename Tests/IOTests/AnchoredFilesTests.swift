import Foundation
import Testing

@testable import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// The calls of the private state stores: everything through a directory descriptor, no link followed, no FIFO
/// blocked on, a name published only once, and errno values callers can tell apart.
@Suite struct AnchoredFilesTests {
    @Test func aFileIsCreatedOncePublishedOnceAndReadBackWithItsOwnerAndMode() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let directory = try AnchoredFiles.openDirectory(FilePath(files.directory.path))
        defer { AnchoredFiles.closeDescriptor(directory) }
        let name = try FilePath(bytes: Array("staged-\u{e9}".utf8) + [0xff])
        let fd = try AnchoredFiles.createExclusive(directory: directory, name, mode: 0o600)
        try unsafe [UInt8]("secret".utf8).withUnsafeBytes { raw in try unsafe AnchoredFiles.writeFully(fd, from: raw) }
        try AnchoredFiles.setPermissions(fd, 0o640)
        try AnchoredFiles.synchronize(fd)
        let status = try AnchoredFiles.status(fd)
        AnchoredFiles.closeDescriptor(fd)
        #expect(status.isRegularFile && !status.isDirectory)
        #expect(status.kindName == "a regular file")
        #expect(status.permissions == 0o640)
        #expect(status.ownerID == AnchoredFiles.effectiveUserID())
        #expect(status.size == 6)
        #expect(throws: AnchoredFiles.Errno.exists) {
            _ = try AnchoredFiles.createExclusive(directory: directory, name, mode: 0o600)
        }

        try AnchoredFiles.link(directory: directory, name, to: "published")
        #expect(throws: AnchoredFiles.Errno.exists) {
            try AnchoredFiles.link(directory: directory, name, to: "published")
        }
        try AnchoredFiles.unlink(directory: directory, name)
        #expect(try AnchoredFiles.listDirectory(directory) == ["published"])
        let reader = try AnchoredFiles.openForReading(directory: directory, "published")
        defer { AnchoredFiles.closeDescriptor(reader) }
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = try unsafe bytes.withUnsafeMutableBytes { raw in
            try unsafe AnchoredFiles.readFully(reader, into: raw)
        }
        #expect(Array(bytes.prefix(count)) == Array("secret".utf8))
        #expect(throws: AnchoredFiles.Errno.noEntry) { try AnchoredFiles.unlink(directory: directory, name) }
    }

    @Test func linksAreNeverFollowedAndAFIFOIsOpenedWithoutBlocking() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let directory = try AnchoredFiles.openDirectory(FilePath(files.directory.path))
        defer { AnchoredFiles.closeDescriptor(directory) }
        try files.write("target", [1, 2, 3])
        #expect(unsafe symlink(files.path("target"), files.path("link")) == 0)
        #expect(unsafe mkfifo(files.path("fifo"), 0o600) == 0)
        try AnchoredFiles.makeDirectory(directory: directory, "sub", mode: 0o700)
        #expect(unsafe symlink(files.path("sub"), files.path("directory-link")) == 0)

        #expect(throws: AnchoredFiles.Errno.symbolicLink) {
            _ = try AnchoredFiles.openForReading(directory: directory, "link")
        }
        // Linux answers ENOTDIR rather than ELOOP when O_DIRECTORY meets a link; either way nothing opens.
        #expect {
            _ = try AnchoredFiles.openDirectory(FilePath(files.path("directory-link")))
        } throws: { [AnchoredFiles.Errno.symbolicLink, .notADirectory].contains($0 as? AnchoredFiles.Errno) }
        #expect(try AnchoredFiles.statNoFollow(directory: directory, "link").kindName == "a symbolic link")
        #expect(try AnchoredFiles.statNoFollow(FilePath(files.path("sub"))).isDirectory)
        #expect(throws: AnchoredFiles.Errno.notADirectory) {
            _ = try AnchoredFiles.openDirectory(directory: directory, "target")
        }
        // A FIFO where a file belongs opens at once (O_NONBLOCK) and reads as empty: no writer, no hang.
        let fifo = try AnchoredFiles.openForReading(directory: directory, "fifo")
        defer { AnchoredFiles.closeDescriptor(fifo) }
        #expect(try AnchoredFiles.status(fifo).kindName == "a FIFO")
        var byte: UInt8 = 0
        #expect(
            try unsafe withUnsafeMutableBytes(of: &byte) { try unsafe AnchoredFiles.readFully(fifo, into: $0) } == 0)
        #expect(AnchoredFiles.Errno.noEntry.text.contains("No such file"))
    }
}
