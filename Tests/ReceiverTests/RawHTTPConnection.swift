import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP connection to 127.0.0.1 for requests no HTTP client would send (a body cut short, raw bytes in
/// a path, a header block too large).
///
/// The descriptor has one owner and is closed exactly once: `init` keeps the socket in a local until it is
/// connected, so a refused connection closes it there and no `deinit` runs for the half-built object. (Storing
/// it first let the throwing `init` close it and then `deinit` close the same number again; in the shared test
/// process that number was by then a libmicrohttpd connection socket of another test, and its daemon aborted
/// with "Close socket failed".)
final class RawHTTPConnection {
    private let descriptor: Int32
    private let closeDescriptor: (Int32) -> Void
    private var closed = false

    /// Connects to 127.0.0.1:`port`; `closing` closes the socket (tests count the calls).
    init(port: UInt16, closing: @escaping (Int32) -> Void = { _ = Glibc.close($0) }) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = unsafe withUnsafePointer(to: &address) { pointer in
            unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                unsafe connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            closing(socket)
            throw POSIXError(.ECONNREFUSED)
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = unsafe setsockopt(
            socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        descriptor = socket
        closeDescriptor = closing
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = unsafe bytes.withUnsafeBytes { raw in
                unsafe Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Reads until the peer closes or `timeout` passes; returns what arrived.
    func receiveAll() -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = unsafe buffer.withUnsafeMutableBytes { unsafe recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            out += buffer[0..<count]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads until a whole response head arrived (or the peer closes).
    func receiveHead() -> String {
        var out: [UInt8] = []
        var byte: UInt8 = 0
        while !out.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            let count = unsafe recv(descriptor, &byte, 1, 0)
            if count <= 0 { break }
            out.append(byte)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads exactly `count` bytes (fewer when the peer closes first).
    func receive(count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var byte: UInt8 = 0
        while out.count < count, unsafe recv(descriptor, &byte, 1, 0) == 1 { out.append(byte) }
        return out
    }

    /// Whether the peer has closed the connection (or reset it), without waiting and without taking bytes.
    func peerClosed() -> Bool {
        var byte: UInt8 = 0
        let count = unsafe recv(descriptor, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    func close() {
        guard !closed else { return }
        closed = true
        closeDescriptor(descriptor)
    }
    deinit { close() }
}
