/// The system calls the path observer makes, as values: `live` in production; tests replace one to force a
/// failure (a thread that does not start, a socket that cannot open) and watch what the observer does with it.
struct NetlinkSystem: Sendable {
    /// Opens the rtnetlink socket, in the namespace at the path when one is given.
    var openSocket: @Sendable (String?) throws(SchedulingError) -> Int32
    /// Starts the receive thread.
    var spawn: @Sendable (@escaping @Sendable () -> Void) throws(SchedulingError) -> Netlink.ThreadHandle
    /// Receives one datagram: its length, 0 on timeout, -1 on a hard error.
    var receive: @Sendable (Int32, inout [UInt8]) -> Int
    /// Closes the socket.
    var closeSocket: @Sendable (Int32) -> Void

    /// The real calls in `Netlink`.
    static let live = NetlinkSystem(
        openSocket: { (path) throws(SchedulingError) in
            if let path { try Netlink.openSocket(inNamespace: path) } else { try Netlink.openSocket() }
        },
        spawn: { (body) throws(SchedulingError) in try Netlink.spawn(body) },
        receive: { fd, buffer in Netlink.receive(fd, into: &buffer) },
        closeSocket: { fd in Netlink.closeSocket(fd) })
}
