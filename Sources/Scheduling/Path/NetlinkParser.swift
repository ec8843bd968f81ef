/// Parses rtnetlink datagrams (`nlmsghdr` + `ifinfomsg`/`rtmsg` + `rtattr`s) from bytes, checking every length
/// against the buffer: a malformed message is reported as an error, never a crash, and the messages after it are
/// still read.
///
/// Layouts (little-endian on every Linux target Aether supports; all structs 4-byte aligned):
/// - nlmsghdr (16): u32 len, u16 type, u16 flags, u32 seq, u32 pid.
/// - ifinfomsg (16): u8 family, u8 pad, u16 type (ARPHRD), i32 index, u32 flags, u32 change.
/// - rtmsg (12): u8 family, dst_len, src_len, tos, table, protocol, scope, type; u32 flags.
/// - rtattr (4 + data): u16 len, u16 type.
public enum NetlinkParser {
    static let newLink: UInt16 = 16
    static let deleteLink: UInt16 = 17
    static let newRoute: UInt16 = 24
    static let deleteRoute: UInt16 = 25
    static let done: UInt16 = 3
    static let error: UInt16 = 2

    /// The events in one datagram; the first damaged message throws. Link events are all
    /// `linkAdded`/`linkRemoved`; the observer turns repeats into `linkChanged`.
    public static func parse(_ bytes: [UInt8]) throws(SchedulingError) -> [NetworkPathEvent] {
        let datagram = read(bytes)
        if let first = datagram.damaged.first { throw first }
        return datagram.events
    }

    /// Every event of one datagram and an error for each damaged message: a message whose body does not parse is
    /// skipped by its header's length; a header that overruns the datagram ends the walk.
    public static func read(_ bytes: [UInt8]) -> NetlinkDatagram {
        var datagram = NetlinkDatagram()
        var offset = 0
        while offset + 16 <= bytes.count {
            let length = Int(u32(bytes, offset))
            let type = u16(bytes, offset + 4)
            guard length >= 16, offset + length <= bytes.count else {
                datagram.damaged.append(
                    SchedulingError(.unreadableSource, "netlink message length \(length) at \(offset) overruns"))
                return datagram
            }
            let body = offset + 16
            let end = offset + length
            do throws(SchedulingError) {
                switch type {
                case newLink, deleteLink:
                    let link = try parseLink(bytes, body, end)
                    datagram.events.append(type == newLink ? .linkAdded(link) : .linkRemoved(link))
                case newRoute, deleteRoute:
                    let route = try parseRoute(bytes, body, end)
                    datagram.events.append(type == newRoute ? .routeAdded(route) : .routeRemoved(route))
                case done:
                    return datagram
                default:
                    break  // NLMSG_NOOP, NLMSG_ERROR acks and other families are not path changes
                }
            } catch {
                datagram.damaged.append(
                    SchedulingError(.unreadableSource, "netlink message of type \(type) at \(offset): \(error.message)")
                )
            }
            offset += align(length)
        }
        return datagram
    }

    static func parseLink(_ bytes: [UInt8], _ start: Int, _ end: Int) throws(SchedulingError) -> NetworkLink {
        guard start + 16 <= end else { throw SchedulingError(.unreadableSource, "short ifinfomsg") }
        let hardware = u16(bytes, start + 2)
        let index = Int32(bitPattern: u32(bytes, start + 4))
        let flags = u32(bytes, start + 8)
        var name = ""
        var kind: String?
        try forEachAttribute(bytes, start + 16, end) { (type, from, to) throws(SchedulingError) in
            switch type {
            case 3:  // IFLA_IFNAME
                name = string(bytes, from, to)
            case 18:  // IFLA_LINKINFO, nested
                try forEachAttribute(bytes, from, to) { (inner, a, b) throws(SchedulingError) in
                    if inner == 1 { kind = string(bytes, a, b) }  // IFLA_INFO_KIND
                }
            default:
                break
            }
        }
        return NetworkLink(
            index: index, name: name, isUp: flags & 0x1 != 0, isRunning: flags & 0x40 != 0, hardwareType: hardware,
            linkKind: kind)
    }

    static func parseRoute(_ bytes: [UInt8], _ start: Int, _ end: Int) throws(SchedulingError) -> NetworkRoute {
        guard start + 12 <= end else { throw SchedulingError(.unreadableSource, "short rtmsg") }
        var route = NetworkRoute(
            family: bytes[start], destination: [], prefixLength: bytes[start + 1], gateway: nil, outputInterface: nil,
            table: UInt32(bytes[start + 4]))
        try forEachAttribute(bytes, start + 12, end) { (type, from, to) throws(SchedulingError) in
            switch type {
            case 1: route.destination = Array(bytes[from..<to])  // RTA_DST
            case 4 where to - from >= 4: route.outputInterface = Int32(bitPattern: u32(bytes, from))  // RTA_OIF
            case 5: route.gateway = Array(bytes[from..<to])  // RTA_GATEWAY
            case 15 where to - from >= 4: route.table = u32(bytes, from)  // RTA_TABLE
            default: break
            }
        }
        return route
    }

    /// Calls `body(type, dataStart, dataEnd)` for each rtattr in [start, end).
    static func forEachAttribute(
        _ bytes: [UInt8], _ start: Int, _ end: Int, _ body: (UInt16, Int, Int) throws(SchedulingError) -> Void
    ) throws(SchedulingError) {
        var offset = start
        while offset + 4 <= end {
            let length = Int(u16(bytes, offset))
            guard length >= 4, offset + length <= end else {
                throw SchedulingError(.unreadableSource, "rtattr length \(length) at \(offset) overruns")
            }
            try body(u16(bytes, offset + 2) & 0x3FFF, offset + 4, offset + length)  // drop NLA_F_NESTED/BYTEORDER
            offset += align(length)
        }
    }

    static func align(_ n: Int) -> Int { (n + 3) & ~3 }
    static func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
    static func u32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }
    static func string(_ b: [UInt8], _ from: Int, _ to: Int) -> String {
        String(decoding: b[from..<to].prefix { $0 != 0 }, as: UTF8.self)
    }
}
