import Foundation
import Testing

@testable import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// The TOCTOU guard and the typed errors for files that are not plain readable files.
@Suite struct GuardedFileTests {
    enum Change: String, CaseIterable {
        case truncate, append, renameOver, rewriteInPlace, remove
    }

    static let cases: [(ReadStrategy, Change)] = ReadStrategy.allCases.flatMap { strategy in
        Change.allCases.map { (strategy, $0) }
    }

    @Test(arguments: cases) func aFileThatChangesDuringAReadIsAFileChangedError(strategy: ReadStrategy, change: Change)
        throws
    {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("f", TemporaryFiles.randomBytes(8 * 4096))
        let reader = try FileChunkReader(path: path, options: ChunkReadOptions(chunkSize: 4096, strategy: strategy))
        #expect(try reader.next()?.count == 4096)
        switch change {
        case .truncate:
            try files.truncate(path, to: 3 * 4096)
        case .append:
            try files.append([1], to: path)
        case .renameOver:
            let other = try files.write("g", TemporaryFiles.randomBytes(8 * 4096))
            #expect(unsafe rename(other, path) == 0)
        case .rewriteInPlace:
            // Same size, new content: only the mtime shows it. Set it explicitly so the test does not
            // depend on the timestamp granularity of the file system.
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.write(contentsOf: Data([0xAA]))
            try handle.close()
            #expect(files.setModificationTime(path, nanoseconds: 1_000_000_000_000_001))
        case .remove:
            #expect(unsafe unlink(path) == 0)
        }
        let error = #expect(throws: IOError.self) {
            while try reader.next() != nil {}
        }
        #expect(error?.code == .fileChanged, "\(strategy) \(change): \(String(describing: error))")
        #expect(error?.path == path)
    }

    @Test func aFileChangedAfterTheLastChunkIsStillCaughtByTheFinalCheck() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("f", [])
        let reader = try FileChunkReader(path: path)
        try files.append([1, 2, 3], to: path)
        let error = #expect(throws: IOError.self) { try reader.next() }
        #expect(error?.code == .fileChanged)
    }

    @Test func aDirectoryIsNotARegularFile() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let error = #expect(throws: IOError.self) { try FileChunkReader(path: files.directory.path) }
        #expect(error?.code == .notARegularFile)
    }

    @Test func aFIFOIsRejectedWithoutWaitingForAWriter() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = files.path("fifo")
        #expect(unsafe mkfifo(path, 0o600) == 0)
        // Opening a FIFO for reading blocks until a writer comes; the guard must not open it at all
        // (and opens with O_NONBLOCK should it be swapped in after the stat).
        let error = #expect(throws: IOError.self) { try FileChunkReader(path: path) }
        #expect(error?.code == .notARegularFile)
        let digestError = #expect(throws: IOError.self) { try FileDigester.digest(path: path) }
        #expect(digestError?.code == .notARegularFile)
    }

    @Test(arguments: ["/dev/zero", "/dev/null", "/dev/urandom"]) func aDeviceIsNotARegularFile(path: String) {
        let error = #expect(throws: IOError.self) { try FileChunkReader(path: path) }
        #expect(error?.code == .notARegularFile)
    }

    @Test func aMissingFileIsASystemCallErrorWithErrnoAndPath() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = files.path("missing")
        let error = #expect(throws: IOError.self) { try FileChunkReader(path: path) }
        #expect(error?.code == .systemCall)
        #expect(error?.errno == ENOENT)
        #expect(error?.path == path)
    }

    @Test func anUnreadableFileIsASystemCallErrorWithEACCES() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        // Root reads any mode-000 file; a write-only sysctl file is refused even to root.
        let path: String
        if geteuid() == 0 {
            path = "/proc/sys/vm/compact_memory"
        } else {
            path = try files.write("secret", [1, 2, 3])
            #expect(unsafe chmod(path, 0) == 0)
        }
        let error = #expect(throws: IOError.self) { try FileChunkReader(path: path) }
        #expect(error?.code == .systemCall)
        #expect(error?.errno == EACCES)
    }

    @Test func aFileLockedExclusivelyByAWriterIsRefused() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("f", [1, 2, 3])
        let writer = unsafe open(path, O_RDWR)
        #expect(writer >= 0)
        defer { close(writer) }
        #expect(flock(writer, LOCK_EX) == 0)
        let error = #expect(throws: IOError.self) { try FileChunkReader(path: path) }
        #expect(error?.code == .systemCall)
        #expect(error?.errno == EWOULDBLOCK)
    }

    @Test(arguments: [ReadStrategy.pread, .ioUring])
    func aFileThatEndsBeforeItsStatedSizeIsUnexpectedEndOfFileNotAnError(strategy: ReadStrategy) throws {
        // sysfs reports 4096 bytes for files holding a few: a short read with an unchanged size is EOF
        // (for io_uring, a short completion finished with pread, which then sees the end).
        let path = "/sys/devices/system/cpu/online"
        let reader = try FileChunkReader(path: path, options: ChunkReadOptions(strategy: strategy))
        let error = #expect(throws: IOError.self) { try reader.next() }
        #expect(error?.code == .unexpectedEndOfFile)
    }

    @Test func errorsNameThePathAndErrnoButNoContent() throws {
        let error = IOError(.systemCall, "pread failed: Input/output error", errno: EIO, path: "/x")
        #expect(error.description == "IOError(systemCall): pread failed: Input/output error [path: /x] [errno 5]")
    }
}
