import AetherIO
import Glibc

/// Every libc call the UDP driver makes: small static functions, each naming the call it wraps.
/// Nothing else in AetherTransport's UDP code touches a socket pointer. EINTR is retried by AetherIO's `Syscall` layer.
enum Socket {
    /// A failed call's errno.
    struct Errno: Error, Equatable {
        let code: Int32

        /// strerror_r (XSI variant): the text of the errno.
        var text: String {
            var buffer = [CChar](repeating: 0, count: 128)
            let result = unsafe buffer.withUnsafeMutableBufferPointer { out -> Int32 in
                guard let base = out.baseAddress else { return -1 }
                return unsafe strerror_r(code, base, out.count - 1)
            }
            guard result == 0 else { return "errno \(code)" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// Runs a call through AetherIO's `Syscall.retryingEINTR`; a failure becomes `Errno`.
    static func retrying<R: FixedWidthInteger>(_ name: StaticString = "socket call", _ call: () -> R) throws(Errno) -> R
    {
        do throws(IOError) {
            return try Syscall.retryingEINTR(name, path: nil, call)
        } catch {
            throw Errno(code: error.errno ?? EIO)
        }
    }

    /// socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)
    static func openUDP() throws(Errno) -> Int32 {
        try retrying { socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
    }

    /// close(2). EINTR is not retried: on Linux the descriptor is released either way.
    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// bind(2) to an IPv4 address.
    static func bind(_ fd: Int32, _ address: UDPAddress) throws(Errno) {
        var raw = socketAddress(address)
        _ = try retrying {
            unsafe withUnsafePointer(to: &raw) { pointer in
                unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    unsafe Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// getsockname(2): the bound IPv4 address.
    static func localAddress(_ fd: Int32) throws(Errno) -> UDPAddress {
        var raw = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = try retrying {
            unsafe withUnsafeMutablePointer(to: &raw) { pointer in
                unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { unsafe getsockname(fd, $0, &length) }
            }
        }
        return udpAddress(raw)
    }

    /// sendto(2) of one datagram.
    static func send(_ fd: Int32, _ bytes: [UInt8], to address: UDPAddress) throws(Errno) {
        var raw = socketAddress(address)
        _ = try retrying {
            unsafe bytes.withUnsafeBytes { data in
                unsafe withUnsafePointer(to: &raw) { pointer in
                    unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                        unsafe sendto(
                            fd, data.baseAddress, data.count, 0, target, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }
    }

    /// poll(2) for readability, then recvfrom(2) of one datagram (at most 65,535 bytes). Nil on timeout.
    static func receive(_ fd: Int32, timeoutMilliseconds: Int32) throws(Errno) -> ([UInt8], UDPAddress)? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = try retrying { unsafe poll(&descriptor, 1, timeoutMilliseconds) }
        guard ready > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_535)
        var raw = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let received: Int
        do {
            received = try retrying {
                unsafe buffer.withUnsafeMutableBytes { data in
                    unsafe withUnsafeMutablePointer(to: &raw) { pointer in
                        unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { source in
                            unsafe recvfrom(fd, data.baseAddress, data.count, Int32(MSG_DONTWAIT), source, &length)
                        }
                    }
                }
            }
        } catch {
            // Nothing to read after all, or an ICMP port-unreachable from an earlier send: not fatal.
            if error.code == EAGAIN || error.code == EWOULDBLOCK || error.code == ECONNREFUSED { return nil }
            throw error
        }
        return (Array(buffer.prefix(received)), udpAddress(raw))
    }

    /// inet_pton(AF_INET): a dotted IPv4 address in host byte order, or nil.
    static func parseIPv4(_ text: String) -> UInt32? {
        var address = in_addr()
        let result = unsafe inet_pton(AF_INET, text, &address)
        guard result == 1 else { return nil }
        return UInt32(bigEndian: address.s_addr)
    }

    /// nanosleep(2) for a short pause (EINTR ends it early, which is harmless here).
    static func pause(milliseconds: Int) {
        var request = timespec(tv_sec: milliseconds / 1_000, tv_nsec: (milliseconds % 1_000) * 1_000_000)
        _ = unsafe nanosleep(&request, nil)
    }

    /// pthread_create of a detached thread that runs `body` (the drivers' run loops block in poll).
    static func spawnThread(_ body: @escaping @Sendable () -> Void) throws(Errno) {
        let box = unsafe Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var thread = pthread_t()
        let result = unsafe pthread_create(
            &thread, nil,
            { raw in
                guard let raw = unsafe raw else { return nil }
                let body = unsafe Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue()
                body.run()
                return nil
            }, box)
        guard result == 0 else {
            unsafe Unmanaged<ThreadBody>.fromOpaque(box).release()
            throw Errno(code: result)
        }
        pthread_detach(thread)
    }

    /// The closure a spawned thread runs, boxed for pthread_create's context pointer.
    final class ThreadBody: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    private static func socketAddress(_ address: UDPAddress) -> sockaddr_in {
        var raw = sockaddr_in()
        raw.sin_family = sa_family_t(AF_INET)
        raw.sin_port = address.port.bigEndian
        raw.sin_addr = in_addr(s_addr: address.ipv4.bigEndian)
        return raw
    }

    private static func udpAddress(_ raw: sockaddr_in) -> UDPAddress {
        UDPAddress(ipv4: UInt32(bigEndian: raw.sin_addr.s_addr), port: UInt16(bigEndian: raw.sin_port))
    }
}
