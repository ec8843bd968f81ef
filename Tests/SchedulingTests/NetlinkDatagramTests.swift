import Synchronization
import Testing

@testable import AetherScheduling

/// Records what the path observer does with the system calls a test hands it.
final class NetlinkRecorder: Sendable {
    let closed = Mutex<[Int32]>([])
    let datagrams: Mutex<[[UInt8]]>

    init(datagrams: [[UInt8]] = []) { self.datagrams = Mutex(datagrams) }

    /// Calls that open `fd`, start real threads or fail to, hand out the queued datagrams, then report a hard error.
    func system(fd: Int32, spawnFails: Bool) -> NetlinkSystem {
        NetlinkSystem(
            openSocket: { _ in fd },
            spawn: { (body) throws(SchedulingError) in
                if spawnFails { throw SchedulingError(.unreadableSource, "pthread_create: 11") }
                return try Netlink.spawn(body)
            },
            receive: { [self] _, buffer in
                guard let next = datagrams.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return -1 }
                buffer.replaceSubrange(0..<next.count, with: next)
                return next.count
            },
            closeSocket: { [self] fd in closed.withLock { $0.append(fd) } })
    }
}

@Suite struct NetlinkDatagramTests {
    static let damagedLink: [UInt8] = {
        var bytes = NetlinkBytes.link(index: 4, name: "bad0", flags: 1, kind: nil)
        bytes[32] = 0xFF  // first rtattr's length overruns its message
        return bytes
    }()

    @Test func oneDamagedMessageCostsOnlyItsOwnEvent() throws {
        let before = NetlinkBytes.link(index: 3, name: "before", flags: 1, kind: nil)
        let bytes =
            before + Self.damagedLink
            + NetlinkBytes.route(destination: [10, 1, 0, 0], prefix: 16, oif: 3)
        let datagram = NetlinkParser.read(bytes)
        #expect(datagram.events.count == 2)
        guard case .linkAdded(let link) = datagram.events.first else {
            Issue.record("expected the link before the damaged message")
            return
        }
        #expect(link.name == "before")
        #expect(datagram.events.last?.changesPath == false)
        guard case .routeAdded(let route) = datagram.events.last else {
            Issue.record("expected the route after the damaged message")
            return
        }
        #expect(route.destination == [10, 1, 0, 0] && route.outputInterface == 3)
        #expect(datagram.damaged.count == 1)
        #expect(datagram.damaged.first?.code == .unreadableSource)
        #expect(datagram.damaged.first?.message.contains("type 16 at \(before.count):") == true)
        // The strict form still refuses the datagram.
        #expect(throws: SchedulingError.self) { try NetlinkParser.parse(bytes) }
    }

    @Test func aHeaderThatOverrunsTheDatagramEndsTheWalkAndIsReported() {
        var truncated = NetlinkBytes.link(index: 5, name: "cut0", flags: 1, kind: nil)
        truncated.removeLast(4)
        let datagram = NetlinkParser.read(NetlinkBytes.link(index: 2, name: "whole", flags: 1, kind: nil) + truncated)
        #expect(datagram.events.count == 1)
        #expect(datagram.damaged.count == 1)
        #expect(datagram.damaged.first?.message.contains("overruns") == true)
    }

    @Test func theObserverDeliversTheGoodEventsAndReportsTheDamagedMessage() async throws {
        let datagram =
            NetlinkBytes.link(index: 9, name: "good0", flags: 1, kind: nil) + Self.damagedLink
            + NetlinkBytes.link(index: 10, name: "good1", flags: 1, kind: nil)
        let recorder = NetlinkRecorder(datagrams: [datagram])
        let observer = NetworkPathObserver(
            namespacePath: nil, sysfsRoot: "/nonexistent", responders: [], bufferLimit: 16,
            system: recorder.system(fd: 4242, spawnFails: false))
        var events: [NetworkPathEvent] = []
        for await event in try observer.start() { events.append(event) }
        observer.stop()
        let names = events.compactMap { event -> String? in
            if case .linkAdded(let link) = event { return link.name } else { return nil }
        }
        #expect(names == ["good0", "good1"])
        let unreadable = events.filter { if case .unreadableMessage = $0 { true } else { false } }
        #expect(unreadable.count == 1)
        #expect(recorder.closed.withLock { $0 } == [4242])
    }

    @Test func aThreadThatFailsToStartClosesTheSocketAndAllowsAnotherStart() throws {
        let recorder = NetlinkRecorder()
        let failing = NetworkPathObserver(
            namespacePath: nil, sysfsRoot: "", responders: [], bufferLimit: 4,
            system: recorder.system(fd: 777, spawnFails: true))
        #expect(throws: SchedulingError.self) { try failing.start() }
        #expect(recorder.closed.withLock { $0 } == [777])
        // The observer is not left marked as running: a second start reaches the (failing) spawn again instead of
        // being refused as already running.
        let error = #expect(throws: SchedulingError.self) { try failing.start() }
        #expect(error?.code == .unreadableSource)
        #expect(recorder.closed.withLock { $0 } == [777, 777])
    }
}
