import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// A child process of `aether demo`: posix_spawn with its standard streams inherited or redirected to files,
/// signalled, and waited for without blocking a thread of the cooperative pool.
final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    enum Stream: Sendable {
        /// The same stream as this process's (a terminal stays a terminal: the progress bar draws live).
        case inherit
        /// A file (created or truncated for output; read from for input).
        case file(String)
    }

    /// The child's process id.
    let pid: pid_t

    /// Starts `executable` with `arguments` (without the program name).
    init(
        _ executable: String, _ arguments: [String], stdin: Stream = .file("/dev/null"), stdout: Stream = .inherit,
        stderr: Stream = .inherit
    ) throws(IOError) {
        var actions = unsafe posix_spawn_file_actions_t()
        unsafe posix_spawn_file_actions_init(&actions)
        defer { unsafe posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, stream, flags) in [
            (Int32(0), stdin, O_RDONLY), (1, stdout, O_WRONLY | O_CREAT | O_TRUNC),
            (2, stderr, O_WRONLY | O_CREAT | O_TRUNC),
        ] {
            if case .file(let path) = stream {
                unsafe posix_spawn_file_actions_addopen(&actions, descriptor, path, flags, 0o600)
            }
        }
        let argv: [UnsafeMutablePointer<CChar>?] = unsafe ([executable] + arguments).map { unsafe strdup($0) } + [nil]
        defer { unsafe argv.forEach { unsafe free($0) } }
        var child: pid_t = 0
        let result = unsafe argv.withUnsafeBufferPointer { buffer in
            unsafe posix_spawn(&child, executable, &actions, nil, buffer.baseAddress!, environ)
        }
        guard result == 0 else { throw Syscall.failure("posix_spawn", code: result, path: executable) }
        pid = child
    }

    /// Sends `signal` to the child.
    func signal(_ number: Int32) {
        _ = kill(pid, number)
    }

    /// Waits for the child to end; returns its exit status (128 + the signal when a signal ended it).
    func wait() async -> Int32 {
        while true {
            var status: Int32 = 0
            let result = unsafe waitpid(pid, &status, WNOHANG)
            if result == pid {
                return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
            }
            if result < 0 && errno != EINTR { return -1 }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The path of the running executable (`/proc/self/exe` resolved).
    static func ownExecutable() throws(IOError) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = unsafe readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw Syscall.failure("readlink", code: errno, path: "/proc/self/exe") }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A UDP port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, closed).
    static func freeUDPPort() throws(IOError) -> UInt16 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw Syscall.failure("socket", code: errno, path: nil) }
        defer { Syscall.close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = unsafe withUnsafeMutablePointer(to: &address) { pointer in
            unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { unsafe bind(socket, $0, length) }
        }
        guard bound == 0 else { throw Syscall.failure("bind", code: errno, path: nil) }
        let named = unsafe withUnsafeMutablePointer(to: &address) { pointer in
            unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { unsafe getsockname(socket, $0, &length) }
        }
        guard named == 0 else { throw Syscall.failure("getsockname", code: errno, path: nil) }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// The file-system helpers of `aether demo`.
enum DemoFiles {
    /// mkdtemp(3) under `$TMPDIR` (default /tmp): a new private directory.
    static func makeTemporaryDirectory(prefix: String) throws(IOError) -> String {
        let base = unsafe getenv("TMPDIR").map { unsafe String(cString: $0) } ?? "/tmp"
        var template = Array((base + "/" + prefix + ".XXXXXX").utf8CString)
        let made = unsafe template.withUnsafeMutableBufferPointer { unsafe mkdtemp($0.baseAddress!) }
        guard unsafe made != nil else { throw Syscall.failure("mkdtemp", code: errno, path: base) }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Overwrites `bytes` of the file `path` at `offset` (pwrite), as damage on a disk would.
    static func overwrite(_ path: String, with bytes: [UInt8], at offset: Int64) throws {
        let descriptor = try Syscall.open(path, flags: O_WRONLY | O_CLOEXEC)
        defer { Syscall.close(descriptor) }
        try unsafe bytes.withUnsafeBytes { raw in
            try unsafe Syscall.pwriteFully(descriptor, from: raw, offset: offset, path: path)
        }
    }
}
