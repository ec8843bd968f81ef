import Synchronization
import Testing

@testable import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct SyscallTests {
    @Test func eintrIsRetriedAndAnyOtherErrnoBecomesATypedError() throws {
        let calls = Mutex(0)
        let result = try Syscall.retryingEINTR("test", path: "/p") { () -> Int32 in
            let call = calls.withLock { count in
                count += 1
                return count
            }
            if call <= 3 {
                errno = EINTR
                return -1
            }
            return 42
        }
        #expect(result == 42)
        #expect(calls.withLock { $0 } == 4)

        let error = #expect(throws: IOError.self) {
            try Syscall.retryingEINTR("test", path: "/p") { () -> Int32 in
                errno = EACCES
                return -1
            }
        }
        #expect(error?.code == .systemCall)
        #expect(error?.errno == EACCES)
        #expect(error?.path == "/p")
    }

    @Test func writesReadsAndRenamesAFileThroughTheLayer() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = files.path("data")
        let fd = try Syscall.open(path, flags: O_RDWR | O_CREAT | O_EXCL, mode: 0o600)
        // Every descriptor of the layer is close-on-exec.
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
        try Syscall.writeFully(fd, Array("hello, world".utf8), path: path)
        try unsafe [UInt8]("HELLO".utf8).withUnsafeBytes { raw in
            try unsafe Syscall.pwriteFully(fd, from: raw, offset: 0, path: path)
        }
        try Syscall.fsync(fd, path: path)
        let status = try Syscall.fstat(fd, path: path)
        #expect(status.isRegularFile && status.size == 12 && status.mode & 0o777 == 0o600)
        var buffer = [UInt8](repeating: 0, count: 20)
        let count = try unsafe buffer.withUnsafeMutableBytes { raw in
            try unsafe Syscall.preadFully(fd, into: raw, offset: 7, path: path)
        }
        #expect(count == 5 && Array(buffer.prefix(5)) == Array("world".utf8))
        try Syscall.ftruncate(fd, length: 5, path: path)
        Syscall.close(fd)

        let moved = files.path("moved")
        try Syscall.rename(path, to: moved)
        #expect(throws: IOError.self) { try Syscall.stat(path) }
        let again = try Syscall.open(moved, flags: O_RDONLY)
        defer { Syscall.close(again) }
        #expect(try Syscall.readAll(again, limit: 100, path: moved) == Array("HELLO".utf8))

        let directory = files.path("sub")
        try Syscall.mkdir(directory, mode: 0o755)
        #expect(try Syscall.stat(directory).kindName == "a directory")
        try Syscall.syncDirectory(directory)
        try Syscall.unlink(moved)
        let missing = #expect(throws: IOError.self) { try Syscall.unlink(moved) }
        #expect(missing?.errno == ENOENT && missing?.path == moved)
    }

    @Test func readAllStopsAtItsLimit() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("big", [UInt8](repeating: 7, count: 10_000))
        let fd = try Syscall.open(path, flags: O_RDONLY)
        defer { Syscall.close(fd) }
        #expect(try Syscall.readAll(fd, limit: 4_097, path: path) == [UInt8](repeating: 7, count: 4_097))
    }

    @Test func pollReportsReadinessAndTimeout() throws {
        var ends: [Int32] = [0, 0]
        #expect(unsafe pipe(&ends) == 0)
        defer {
            Syscall.close(ends[0])
            Syscall.close(ends[1])
        }
        #expect(try !Syscall.poll(ends[0], events: Int16(POLLIN), timeoutMilliseconds: 0, path: "pipe"))
        try Syscall.writeFully(ends[1], [1], path: "pipe")
        #expect(try Syscall.poll(ends[0], events: Int16(POLLIN), timeoutMilliseconds: 0, path: "pipe"))
    }
}
