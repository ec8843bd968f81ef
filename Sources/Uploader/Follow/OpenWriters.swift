import AetherIO

/// The files some process holds open for writing, by device and inode: one pass over `/proc/PID/fd`, each
/// descriptor's `fdinfo` flags not read-only. `FollowedFile.writerHoldsFile` asks it for one file, a followed
/// capture for every file of a look. Nil when `/proc` cannot be read.
enum OpenWriters {
    struct Identity: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    static func scan() -> Set<Identity>? {
        guard let pids = try? Syscall.directoryEntries(FilePath("/proc")) else { return nil }
        var open: Set<Identity> = []
        for pid in pids where pid.bytes.allSatisfy({ (0x30...0x39).contains($0) }) {
            let base = FilePath("/proc").appending(pid)
            guard let fds = try? Syscall.directoryEntries(base.appending("fd")) else { continue }
            for fd in fds {
                guard let status = try? Syscall.stat(base.appending("fd").appending(fd)), status.isRegularFile,
                    FollowedFile.isOpenForWriting(base.appending("fdinfo").appending(fd))
                else { continue }
                open.insert(Identity(device: status.device, inode: status.inode))
            }
        }
        return open
    }
}
