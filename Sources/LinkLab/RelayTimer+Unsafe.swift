import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// The relay's waiting: a timerfd on CLOCK_MONOTONIC armed at the next release time (absolute), a pipe that wakes
/// it for a command, and poll(2) over those and the two TUN devices.
enum RelayTimer {
    private typealias Create = @convention(c) (Int32, Int32) -> Int32
    private typealias SetTime =
        @convention(c) (Int32, Int32, UnsafePointer<itimerspec>?, UnsafeMutablePointer<itimerspec>?) -> Int32

    // glibc has timerfd_create and timerfd_settime, but the Glibc module does not export them; looked up once.
    private static let create: Create? = symbol("timerfd_create", as: Create.self)
    private static let setTime: SetTime? = unsafe symbol("timerfd_settime", as: SetTime.self)

    private static func symbol<T>(_ name: String, as type: T.Type) -> T? {
        guard let handle = unsafe dlopen(nil, RTLD_NOW), let symbol = unsafe dlsym(handle, name) else { return nil }
        return unsafe unsafeBitCast(symbol, to: type)
    }

    /// timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC).
    static func make() throws(LinkLabError) -> Int32 {
        guard let create = create else { throw LinkLabError(.unavailable, "this C library has no timerfd") }
        let descriptor = create(CLOCK_MONOTONIC, O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw LinkLabError(.systemCall, "timerfd_create: \(TunDevice.reason(errno))")
        }
        return descriptor
    }

    /// timerfd_settime(TFD_TIMER_ABSTIME) at `nanoseconds` on CLOCK_MONOTONIC; nil disarms it.
    static func arm(_ descriptor: Int32, at nanoseconds: Int64?) {
        guard let setTime = unsafe setTime else { return }
        var value = itimerspec()
        if let nanoseconds {
            // A zero it_value disarms the timer, so a time at or before zero becomes 1 ns (already passed).
            let time = max(nanoseconds, 1)
            value.it_value = timespec(tv_sec: Int(time / 1_000_000_000), tv_nsec: Int(time % 1_000_000_000))
        }
        _ = unsafe setTime(descriptor, 1, &value, nil)
    }

    /// Reads (and so clears) a readable timerfd or wake pipe.
    static func drain(_ descriptor: Int32) {
        var scratch = [UInt8](repeating: 0, count: 64)
        while unsafe scratch.withUnsafeMutableBytes({ unsafe Glibc.read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// A pipe, both ends non-blocking and close-on-exec: (read end, write end).
    static func pipe() throws(LinkLabError) -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        guard unsafe Glibc.pipe(&ends) == 0 else {
            throw LinkLabError(.systemCall, "pipe: \(TunDevice.reason(errno))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        return (ends[0], ends[1])
    }

    /// Writes one byte to a wake pipe (a full pipe is already a pending wake).
    static func signal(_ descriptor: Int32) {
        var byte: UInt8 = 1
        _ = unsafe Glibc.write(descriptor, &byte, 1)
    }

    /// poll(2) on `descriptors` for input, `timeout` milliseconds (-1: until one is ready); which are readable.
    static func wait(_ descriptors: [Int32], timeout: Int32) -> [Bool] {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let result = unsafe entries.withUnsafeMutableBufferPointer {
            unsafe poll($0.baseAddress, nfds_t($0.count), timeout)
        }
        guard result > 0 else { return descriptors.map { _ in false } }
        return entries.map { $0.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 }
    }
}

extension RelayTimer {
    /// close(2).
    static func close(_ descriptor: Int32) {
        Syscall.close(descriptor)
    }
}
