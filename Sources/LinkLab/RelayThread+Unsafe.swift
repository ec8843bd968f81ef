#if canImport(Glibc)
    import Glibc
#endif

/// The relay thread's own settings and clocks.
enum RelayThread {
    /// sched_setscheduler(2) of the calling thread to SCHED_FIFO at `priority`; false when refused (no
    /// CAP_SYS_NICE, or no real-time budget in this cgroup).
    static func raisePriority(_ priority: Int32) -> Bool {
        var parameter = sched_param(sched_priority: priority)
        return unsafe sched_setscheduler(0, SCHED_FIFO, &parameter) == 0
    }

    /// clock_gettime(2) CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU time, nanoseconds.
    static func cpuNanoseconds() -> Int64 {
        var spec = timespec()
        _ = unsafe clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// clock_gettime(2) CLOCK_MONOTONIC, nanoseconds (the clock of the timerfd and of every time in the relay).
    static func now() -> Int64 {
        var spec = timespec()
        _ = unsafe clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
