import AetherScheduling

/// `NetlinkParser.parse` (rtnetlink datagrams read by the network path observer). Properties: no crash on
/// any length or nesting; errors are `.unreadableSource`; every event's attribute bytes came from the
/// datagram (no event longer than it).
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    let datagram = unsafe Array(bytes)
    let events: [NetworkPathEvent]
    do {
        events = try NetlinkParser.parse(datagram)
    } catch {
        FuzzCheck.require(error.code == .unreadableSource, "a reject must be unreadableSource, got \(error.code)")
        return
    }
    FuzzCheck.require(events.count <= datagram.count / 16, "more events than 16-byte headers")
    for event in events {
        switch event {
        case .routeAdded(let route), .routeRemoved(let route):
            FuzzCheck.require(
                route.destination.count + (route.gateway?.count ?? 0) <= datagram.count,
                "route longer than its datagram")
        default: break
        }
    }
    if !events.isEmpty { FuzzCheck.accepted("\(events.count) events") }
}
