import AetherIO
import Glibc

/// The libc calls of following a growing file: inotify (the writer's appends and closes wake the follower) and
/// nothing else. Every descriptor is non-blocking and close-on-exec; EINTR is retried. Nothing else in
/// `Follow/` imports Glibc.
enum FollowPosix {
    /// What one drain of the inotify queue saw.
    struct Events: Equatable {
        /// `IN_MODIFY`: bytes were written.
        var modified = false
        /// `IN_CLOSE_WRITE`: a descriptor open for writing was closed.
        var closedForWriting = false
        /// `IN_ATTRIB`, `IN_MOVE_SELF`, `IN_DELETE_SELF`: the file was renamed, deleted or its metadata changed.
        var moved = false

        var any: Bool { modified || closedForWriting || moved }
    }

    /// inotify_init1(IN_NONBLOCK | IN_CLOEXEC) and inotify_add_watch for appends, closes and moves of `path`;
    /// nil where inotify is refused (then the follower polls).
    static func watch(_ path: FilePath) -> Int32? {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF)
        let watch = unsafe path.withCString { unsafe inotify_add_watch(descriptor, $0, mask) }
        guard watch >= 0 else {
            Glibc.close(descriptor)
            return nil
        }
        return descriptor
    }

    /// read(2) of every queued inotify event (non-blocking): which kinds arrived since the last drain.
    static func drain(_ descriptor: Int32) -> Events {
        var events = Events()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = unsafe buffer.withUnsafeMutableBytes { raw in
                unsafe Glibc.read(descriptor, raw.baseAddress, raw.count)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return events }
            var offset = 0
            // struct inotify_event: wd (4), mask (4), cookie (4), len (4), name[len].
            while offset + 16 <= count {
                let mask =
                    UInt32(buffer[offset + 4]) | UInt32(buffer[offset + 5]) << 8
                    | UInt32(buffer[offset + 6]) << 16 | UInt32(buffer[offset + 7]) << 24
                let length =
                    Int(buffer[offset + 12]) | Int(buffer[offset + 13]) << 8
                    | Int(buffer[offset + 14]) << 16 | Int(buffer[offset + 15]) << 24
                if mask & UInt32(IN_MODIFY) != 0 { events.modified = true }
                if mask & UInt32(IN_CLOSE_WRITE) != 0 { events.closedForWriting = true }
                if mask & UInt32(IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF) != 0 { events.moved = true }
                offset += 16 + length
            }
        }
    }

    /// close(2).
    static func close(_ descriptor: Int32) {
        Glibc.close(descriptor)
    }

    /// The access mode bits (`O_ACCMODE`) and the write-only / read-write values, for reading `fdinfo` flags.
    static let accessModeMask = Int(O_ACCMODE)
    static let readOnlyMode = Int(O_RDONLY)
}
