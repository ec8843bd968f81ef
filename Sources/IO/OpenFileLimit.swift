#if canImport(Glibc)
    import Glibc
#endif

/// The process's open-file limit (`RLIMIT_NOFILE`).
///
/// Running out of descriptors is not only a failed `open` here: libdispatch's worker monitor reads
/// `/proc/TID/stat` for its threads and ends the process (SIGILL, "registered worker exited prematurely") when
/// that `open` fails, so a long-running process keeps its own use under the limit with room to spare.
public enum OpenFileLimit {
    /// The soft limit in force (1,024, the usual default, when it cannot be read).
    public static var current: Int {
        var limit = rlimit()
        guard unsafe getrlimit(resource, &limit) == 0 else { return 1024 }
        return clamp(limit.rlim_cur)
    }

    /// Raises the soft limit to the hard one (at most `ceiling`), as a server that holds a descriptor a connection
    /// does at start (`current` then tells the limit in force). A limit that cannot be raised is left as it is.
    public static func raise(ceiling: Int = 1 << 20) {
        var limit = rlimit()
        guard unsafe getrlimit(resource, &limit) == 0 else { return }
        let wanted = min(limit.rlim_max, rlim_t(ceiling))
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            _ = unsafe setrlimit(resource, &raised)
        }
    }

    /// RLIM_INFINITY (all bits set) and anything past Int32 count as Int32.max.
    private static func clamp(_ value: rlim_t) -> Int {
        value > rlim_t(Int32.max) ? Int(Int32.max) : Int(value)
    }

    /// `RLIMIT_NOFILE` as `getrlimit` takes it (an enum in Glibc's headers).
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
}
