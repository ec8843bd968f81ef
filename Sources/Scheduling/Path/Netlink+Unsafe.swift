#if canImport(Glibc)
    import Glibc
#endif

/// Every raw call of the path observer: the rtnetlink socket, the receive loop's thread, and `setns(2)` for
/// observing another network namespace. Kernel ABI constants are spelled out (Glibc's module lacks
/// <linux/netlink.h>); the messages are parsed from bytes by `NetlinkParser`.
enum Netlink {
    /// `NETLINK_ROUTE` protocol number.
    static let protocolRoute: Int32 = 0
    /// `RTMGRP_LINK | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE`.
    static let groups: UInt32 = 0x1 | 0x40 | 0x400
    /// `CLONE_NEWNET`.
    static let cloneNewNet: Int32 = 0x4000_0000

    /// Opens and binds an rtnetlink socket subscribed to link and route changes, with a 100 ms receive timeout so
    /// the reader can notice a stop. Calls `socket(2)`, `setsockopt(2)` and `bind(2)`.
    static func openSocket() throws(SchedulingError) -> Int32 {
        let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), protocolRoute)
        guard fd >= 0 else { throw SchedulingError(.unreadableSource, "netlink socket: errno \(errno)") }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        _ = unsafe setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var bufferSize: Int32 = 1 << 20
        _ = unsafe setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
        // struct sockaddr_nl { sa_family_t nl_family; unsigned short nl_pad; __u32 nl_pid; __u32 nl_groups; }
        var address = [UInt8](repeating: 0, count: 12)
        address[0] = UInt8(AF_NETLINK & 0xFF)
        address[1] = UInt8(AF_NETLINK >> 8)
        for k in 0..<4 { address[8 + k] = UInt8((groups >> (8 * UInt32(k))) & 0xFF) }
        let bound = unsafe address.withUnsafeBytes { raw in
            unsafe bind(fd, raw.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw SchedulingError(.unreadableSource, "netlink bind: errno \(code)")
        }
        return fd
    }

    /// Opens the socket inside the network namespace at `namespacePath` (e.g. `/run/netns/NAME`): a throwaway
    /// thread joins the namespace with `setns(2)` (looked up with `dlsym`, as Glibc's module does not declare it),
    /// opens the socket there, and exits; the socket stays bound to that namespace.
    static func openSocket(inNamespace namespacePath: String) throws(SchedulingError) -> Int32 {
        let result = ResultBox()
        let thread = try spawn {
            let nsfd = unsafe open(namespacePath, O_RDONLY | O_CLOEXEC)
            guard nsfd >= 0 else {
                result.value = .failure(SchedulingError(.unreadableSource, "cannot open \(namespacePath)"))
                return
            }
            defer { close(nsfd) }
            typealias SetNS = @convention(c) (Int32, Int32) -> Int32
            guard let symbol = unsafe dlsym(nil, "setns") else {
                result.value = .failure(SchedulingError(.unreadableSource, "setns is not available"))
                return
            }
            let setns = unsafe unsafeBitCast(symbol, to: SetNS.self)
            guard setns(nsfd, cloneNewNet) == 0 else {
                result.value = .failure(SchedulingError(.unreadableSource, "setns(\(namespacePath)): errno \(errno)"))
                return
            }
            do throws(SchedulingError) {
                result.value = .success(try openSocket())
            } catch {
                result.value = .failure(error)
            }
        }
        join(thread)
        switch result.value {
        case .success(let fd): return fd
        case .failure(let error): throw error
        case nil: throw SchedulingError(.unreadableSource, "namespace thread gave no result")
        }
    }

    /// Receives one datagram into `buffer`; returns its length, 0 on timeout, -1 on a hard error.
    /// Calls `recv(2)`.
    static func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
        let count = unsafe buffer.withUnsafeMutableBytes { raw in unsafe recv(fd, raw.baseAddress, raw.count, 0) }
        if count >= 0 { return count }
        switch errno {
        case EAGAIN, EWOULDBLOCK, EINTR: return 0
        case ENOBUFS: return 0  // the kernel dropped events under load; later ones still arrive
        default: return -1
        }
    }

    /// Closes the socket; calls `close(2)`.
    static func closeSocket(_ fd: Int32) { close(fd) }

    /// Holds a thread's result across the join (written by the thread before it exits, read after the join).
    final class ResultBox: @unchecked Sendable {  // one writer, read only after pthread_join
        var value: Result<Int32, SchedulingError>?
    }

    private final class Body: @unchecked Sendable {  // handed to exactly one thread
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// A started thread, to be joined once.
    struct ThreadHandle: @unchecked Sendable {  // pthread_t is an integer id on Linux; joined exactly once
        let raw: pthread_t
    }

    /// Starts a thread running `body`; calls `pthread_create(3)`.
    static func spawn(_ body: @escaping @Sendable () -> Void) throws(SchedulingError) -> ThreadHandle {
        var thread = pthread_t()
        let box = unsafe Unmanaged.passRetained(Body(body)).toOpaque()
        let status = unsafe pthread_create(
            &thread, nil,
            { raw in
                guard let raw = unsafe raw else { return nil }
                unsafe Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
                return nil
            }, box)
        guard status == 0 else {
            unsafe Unmanaged<Body>.fromOpaque(box).release()
            throw SchedulingError(.unreadableSource, "pthread_create: \(status)")
        }
        return ThreadHandle(raw: thread)
    }

    /// Waits for a thread; calls `pthread_join(3)`.
    static func join(_ thread: ThreadHandle) {
        _ = pthread_join(thread.raw, nil)
    }
}
