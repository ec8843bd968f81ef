import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The raw test connection owns one descriptor and closes it exactly once. A second close of the same number
/// closes whatever the process opened under it meanwhile; in the shared test process that was a libmicrohttpd
/// connection socket, and the daemon aborted the whole run ("daemon.c:3845: Close socket failed").
@Suite struct RawHTTPConnectionTests {
    /// Records every descriptor the connection closes (and closes it).
    final class CloseLog {
        var closed: [Int32] = []
        func close(_ descriptor: Int32) {
            closed.append(descriptor)
            _ = Glibc.close(descriptor)
        }
    }

    /// A TCP socket bound to 127.0.0.1 and a free port; listening only when asked, so a connection to it is
    /// refused otherwise. The caller closes the socket.
    static func boundSocket(listening: Bool) throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(descriptor >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = unsafe withUnsafeMutablePointer(to: &address) { pointer in
            unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { unsafe bind(descriptor, $0, length) }
        }
        let named = unsafe withUnsafeMutablePointer(to: &address) { pointer in
            unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                unsafe getsockname(descriptor, $0, &length)
            }
        }
        let listened = listening ? listen(descriptor, 4) : 0
        guard bound == 0, named == 0, listened == 0 else {
            _ = Glibc.close(descriptor)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    @Test func aRefusedConnectionClosesItsSocketExactlyOnce() throws {
        let (listener, port) = try Self.boundSocket(listening: false)
        defer { _ = Glibc.close(listener) }
        let log = CloseLog()
        #expect(throws: POSIXError.self) { try RawHTTPConnection(port: port, closing: log.close) }
        // Once by the failed init; the half-built object must not close the same number again.
        #expect(log.closed.count == 1)
        #expect(log.closed.allSatisfy { $0 >= 0 && $0 != listener })
    }

    @Test func aConnectionClosedByHandIsNotClosedAgainWhenDropped() throws {
        let (listener, port) = try Self.boundSocket(listening: true)
        defer { _ = Glibc.close(listener) }
        let log = CloseLog()
        do {
            let connection = try RawHTTPConnection(port: port, closing: log.close)
            connection.close()
            connection.close()
            #expect(log.closed.count == 1)
        }
        #expect(log.closed.count == 1)
    }

    @Test func aConnectionDroppedOpenIsClosedOnce() throws {
        let (listener, port) = try Self.boundSocket(listening: true)
        defer { _ = Glibc.close(listener) }
        let log = CloseLog()
        do {
            let connection = try RawHTTPConnection(port: port, closing: log.close)
            connection.send("")
            #expect(log.closed.isEmpty)
        }
        #expect(log.closed.count == 1)
    }
}
