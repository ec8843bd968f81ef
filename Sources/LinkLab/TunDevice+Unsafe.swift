import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// The TUN calls of the lab: the device is made by opening /dev/net/tun and naming it with TUNSETIFF (in the
/// network namespace of the calling thread), and each read(2) or write(2) on it is one IP packet.
enum TunDevice {
    /// TUNSETIFF, `_IOW('T', 202, int)` in <linux/if_tun.h>.
    private static let setInterface: UInt = 0x4004_54CA
    /// IFF_TUN (IP packets, no Ethernet header) | IFF_NO_PI (no packet-information prefix).
    private static let flags: UInt16 = 0x0001 | 0x1000
    /// IFNAMSIZ, the names' limit with their terminating zero.
    static let nameLimit = 16

    /// Opens a new TUN device `name` (non-blocking); closing the descriptor removes the device.
    static func open(name: String) throws(LinkLabError) -> Int32 {
        let nameBytes = Array(name.utf8)
        guard !nameBytes.isEmpty, nameBytes.count < nameLimit else {
            throw LinkLabError(.invalidConfiguration, "TUN device name \(name) is not 1-15 bytes")
        }
        let descriptor: Int32
        do {
            descriptor = try Syscall.open("/dev/net/tun", flags: O_RDWR | O_NONBLOCK)
        } catch {
            throw LinkLabError(.systemCall, "open /dev/net/tun: \(error.message)")
        }
        // struct ifreq: the name (16 bytes, zero-terminated), then ifr_flags (a short) in a 24-byte union.
        var request = [UInt8](repeating: 0, count: 40)
        request.replaceSubrange(0..<nameBytes.count, with: nameBytes)
        request[16] = UInt8(flags & 0xFF)
        request[17] = UInt8(flags >> 8)
        // ioctl(2) TUNSETIFF with the ifreq.
        let result = unsafe request.withUnsafeMutableBytes { raw -> Int32 in
            guard let base = raw.baseAddress else { return -1 }
            return unsafe ioctl(descriptor, setInterface, base)
        }
        guard result == 0 else {
            let code = errno
            Syscall.close(descriptor)
            throw LinkLabError(.systemCall, "ioctl TUNSETIFF \(name): \(Self.reason(code))")
        }
        return descriptor
    }

    /// Outcome of one read.
    enum Read: Equatable {
        /// A packet of this many bytes is at the start of the buffer.
        case packet(Int)
        /// Nothing to read now.
        case empty
        /// The device failed (errno).
        case failed(Int32)
    }

    /// read(2) of one packet into `buffer`.
    static func read(_ descriptor: Int32, into buffer: inout [UInt8]) -> Read {
        while true {
            let count = unsafe buffer.withUnsafeMutableBytes { raw -> Int in
                unsafe Glibc.read(descriptor, raw.baseAddress, raw.count)
            }
            if count > 0 { return .packet(count) }
            if count == 0 { return .empty }
            let code = errno
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? .empty : .failed(code)
        }
    }

    /// write(2) of one packet; false when the device refused it.
    static func write(_ descriptor: Int32, _ packet: [UInt8]) -> Bool {
        while true {
            let count = unsafe packet.withUnsafeBytes { raw -> Int in
                unsafe Glibc.write(descriptor, raw.baseAddress, raw.count)
            }
            if count == packet.count { return true }
            if count < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// The system's text for `code` (strerror(3)).
    static func reason(_ code: Int32) -> String {
        unsafe String(cString: strerror(code))
    }
}
