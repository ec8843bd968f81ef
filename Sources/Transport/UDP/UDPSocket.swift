/// A bound IPv4 UDP socket: one datagram per send, `receive` waits with a timeout.
///
/// Safe to use from several threads (the kernel serializes the calls); closed on deinit.
package final class UDPSocket: Sendable {
    private let fd: Int32
    /// The address the socket is bound to (the port filled in when 0 was asked).
    package let localAddress: UDPAddress

    /// Opens a socket bound to `address` (port 0 picks a free port).
    package init(binding address: UDPAddress) throws(TransportError) {
        let fd: Int32
        do {
            fd = try Socket.openUDP()
        } catch {
            throw TransportError(.systemCall, "socket failed: \(error.text)")
        }
        do {
            try Socket.bind(fd, address)
            localAddress = try Socket.localAddress(fd)
        } catch {
            Socket.close(fd)
            throw TransportError(.systemCall, "bind to \(address) failed: \(error.text)")
        }
        self.fd = fd
    }

    deinit { Socket.close(fd) }

    /// Sends one datagram. A failure (unreachable port, full buffer) is reported, never fatal.
    package func send(_ bytes: [UInt8], to address: UDPAddress) throws(TransportError) {
        do {
            try Socket.send(fd, bytes, to: address)
        } catch {
            throw TransportError(.systemCall, "sendto \(address) failed: \(error.text)")
        }
    }

    /// Waits up to `timeoutMilliseconds` for one datagram; nil when none came.
    package func receive(timeoutMilliseconds: Int32) throws(TransportError) -> (bytes: [UInt8], from: UDPAddress)? {
        do {
            guard let (bytes, source) = try Socket.receive(fd, timeoutMilliseconds: timeoutMilliseconds) else {
                return nil
            }
            return (bytes, source)
        } catch {
            throw TransportError(.systemCall, "recvfrom failed: \(error.text)")
        }
    }
}
