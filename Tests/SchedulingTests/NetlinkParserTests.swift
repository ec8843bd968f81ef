import Testing

@testable import AetherScheduling

/// Builds rtnetlink messages byte by byte, as the kernel lays them out.
enum NetlinkBytes {
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * UInt32($0))) & 0xFF) } }
    static func pad(_ b: [UInt8]) -> [UInt8] { b + Array(repeating: 0, count: (4 - b.count % 4) % 4) }

    static func attribute(_ type: UInt16, _ data: [UInt8]) -> [UInt8] {
        pad(le16(UInt16(4 + data.count)) + le16(type) + data)
    }

    static func message(type: UInt16, body: [UInt8]) -> [UInt8] {
        le32(UInt32(16 + body.count)) + le16(type) + le16(0) + le32(1) + le32(0) + body
    }

    static func link(type: UInt16 = 16, index: Int32, name: String, flags: UInt32, hardware: UInt16 = 1, kind: String?)
        -> [UInt8]
    {
        var body: [UInt8] = [0, 0] + le16(hardware) + le32(UInt32(bitPattern: index)) + le32(flags) + le32(0)
        body += attribute(3, Array(name.utf8) + [0])
        if let kind { body += attribute(18 | 0x8000, attribute(1, Array(kind.utf8) + [0])) }
        return message(type: type, body: body)
    }

    static func route(type: UInt16 = 24, family: UInt8 = 2, destination: [UInt8], prefix: UInt8, oif: Int32)
        -> [UInt8]
    {
        var body: [UInt8] = [family, prefix, 0, 0, 254, 3, 0, 1] + le32(0)
        if !destination.isEmpty { body += attribute(1, destination) }
        body += attribute(4, le32(UInt32(bitPattern: oif)))
        body += attribute(15, le32(254))
        return message(type: type, body: body)
    }
}

@Suite struct NetlinkParserTests {
    @Test func parsesLinkAndRouteMessagesInOneDatagram() throws {
        let bytes =
            NetlinkBytes.link(index: 7, name: "veth-a", flags: 0x1 | 0x40, kind: "veth")
            + NetlinkBytes.route(destination: [10, 99, 0, 0], prefix: 24, oif: 7)
            + NetlinkBytes.route(type: 25, destination: [], prefix: 0, oif: 7)
            + NetlinkBytes.link(type: 17, index: 7, name: "veth-a", flags: 0, kind: nil)
        let events = try NetlinkParser.parse(bytes)
        #expect(events.count == 4)
        guard case .linkAdded(let link) = events[0] else {
            Issue.record("expected a link")
            return
        }
        #expect(link.index == 7 && link.name == "veth-a" && link.isUp && link.isRunning && link.linkKind == "veth")
        #expect(
            events[1]
                == .routeAdded(
                    NetworkRoute(
                        family: 2, destination: [10, 99, 0, 0], prefixLength: 24, gateway: nil, outputInterface: 7,
                        table: 254)))
        guard case .routeRemoved(let route) = events[2] else {
            Issue.record("expected a route removal")
            return
        }
        #expect(route.prefixLength == 0 && events[2].changesPath)
        #expect(!events[1].changesPath)
        guard case .linkRemoved(let gone) = events[3] else {
            Issue.record("expected a link removal")
            return
        }
        #expect(gone.index == 7 && !gone.isUp)
    }

    @Test func rejectsAMessageLongerThanTheDatagram() {
        var bytes = NetlinkBytes.link(index: 1, name: "eth0", flags: 1, kind: nil)
        bytes.removeLast(4)
        #expect(throws: SchedulingError.self) { try NetlinkParser.parse(bytes) }
    }

    @Test func rejectsAnAttributeThatOverrunsItsMessage() {
        var bytes = NetlinkBytes.link(index: 1, name: "eth0", flags: 1, kind: nil)
        bytes[32] = 0xFF  // first rtattr's length
        #expect(throws: SchedulingError.self) { try NetlinkParser.parse(bytes) }
    }

    @Test func rejectsATruncatedBody() {
        let bytes = NetlinkBytes.message(type: 16, body: [0, 0, 1, 0])
        #expect(throws: SchedulingError.self) { try NetlinkParser.parse(bytes) }
    }

    @Test func survivesEveryTruncationOfAValidDatagram() throws {
        let bytes =
            NetlinkBytes.link(index: 3, name: "wlan0", flags: 0x41, kind: nil)
            + NetlinkBytes.route(family: 10, destination: Array(repeating: 0xFE, count: 16), prefix: 64, oif: 3)
        let link = NetworkLink(
            index: 3, name: "wlan0", isUp: true, isRunning: true, hardwareType: 1, linkKind: nil)
        let route = NetworkRoute(
            family: 10, destination: Array(repeating: 0xFE, count: 16), prefixLength: 64, gateway: nil,
            outputInterface: 3, table: 254)
        let whole = try NetlinkParser.parse(bytes)
        #expect(whole == [.linkAdded(link), .routeAdded(route)])
        // Every cut either fails with the typed error or yields only the messages that are whole, exactly decoded.
        let linkLength = NetlinkBytes.link(index: 3, name: "wlan0", flags: 0x41, kind: nil).count
        for cut in 0..<bytes.count {
            do {
                let events = try NetlinkParser.parse(Array(bytes.prefix(cut)))
                #expect(events == Array(whole.prefix(cut >= linkLength ? 1 : 0)), "cut at \(cut)")
            } catch {
                #expect(error.code == .unreadableSource, "cut at \(cut)")
            }
        }
    }

    @Test func ignoresOtherMessageTypesAndStopsAtDone() throws {
        let bytes =
            NetlinkBytes.message(type: 1, body: [])
            + NetlinkBytes.message(type: 3, body: [0, 0, 0, 0])
            + NetlinkBytes.link(index: 2, name: "after-done", flags: 1, kind: nil)
        #expect(try NetlinkParser.parse(bytes).isEmpty)
    }
}

@Suite struct InterfaceClassifierTests {
    static func link(_ name: String, hardware: UInt16 = 1, kind: String? = nil) -> NetworkLink {
        NetworkLink(index: 1, name: name, isUp: true, isRunning: true, hardwareType: hardware, linkKind: kind)
    }

    @Test func classifiesFromAFakeSysfs() throws {
        let tree = try FakeTree()
        defer { tree.destroy() }
        try tree.directory("sys/class/net/wlp2s0/wireless")
        try tree.directory("sys/class/net/enp3s0/device")
        try tree.write("sys/class/net/wwan0/uevent", "DEVTYPE=wwan\nINTERFACE=wwan0\n")
        try tree.write("sys/class/net/mlan0/uevent", "DEVTYPE=wlan\n")
        try tree.directory("sys/class/net/docker0")
        let classifier = InterfaceClassifier(root: tree.root)
        #expect(classifier.classify(Self.link("wlp2s0")) == .wireless)
        #expect(classifier.classify(Self.link("enp3s0")) == .wired)
        #expect(classifier.classify(Self.link("wwan0", hardware: 0xFFFE)) == .cellular)
        #expect(classifier.classify(Self.link("mlan0")) == .wireless)
        #expect(classifier.classify(Self.link("docker0", kind: "bridge")) == .virtual)
        #expect(classifier.classify(Self.link("docker0")) == .virtual)
        #expect(classifier.classify(Self.link("lo", hardware: 772)) == .loopback)
        #expect(classifier.classify(Self.link("rmnet_data0", hardware: 519)) == .cellular)
        #expect(classifier.classify(Self.link("../../etc", hardware: 65534 - 1)) == .unknown)
    }
}
