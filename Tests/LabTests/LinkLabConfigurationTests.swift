import Testing

@testable import AetherLinkLab

/// Configuration checks, the listings the lab parses (`ip netns list`, /proc/net/tcp), counters arithmetic and
/// the lateness histogram.
@Suite struct LinkLabConfigurationTests {
    static func direction(_ change: (inout LinkLabDirection) -> Void = { _ in }) -> LinkLabDirection {
        var direction = LinkLabDirection(delay: 0.04, rate: .constant(megabitsPerSecond: 20))
        change(&direction)
        return direction
    }

    static func code(_ configuration: LinkLabConfiguration) -> LinkLabError.Code? {
        do {
            try configuration.validate()
            return nil
        } catch {
            return error.code
        }
    }

    @Test func aPlainConfigurationIsValid() {
        #expect(Self.code(LinkLabConfiguration(uplink: Self.direction(), downlink: Self.direction())) == nil)
    }

    @Test(arguments: [
        Self.direction { $0.delay = -1 }, Self.direction { $0.delay = .nan }, Self.direction { $0.lossRate = 1 },
        Self.direction { $0.rate = .constant(megabitsPerSecond: 0) },
        Self.direction { $0.rate = .trace([]) },
        Self.direction { $0.rate = .trace([.init(duration: 1, megabitsPerSecond: 0)]) },
        Self.direction { $0.rate = .trace([.init(duration: 0, megabitsPerSecond: 5)]) },
        Self.direction { $0.rate = .trace([.init(duration: 1, megabitsPerSecond: 5)], startingAt: -1) },
        Self.direction { $0.queueLimit = .bytes(100) }, Self.direction { $0.queueLimit = .time(0) },
        Self.direction { $0.outages = [LinkLabOutage(start: 1, length: 0)] },
    ])
    func anOutOfRangeDirectionIsRefused(direction: LinkLabDirection) {
        #expect(Self.code(LinkLabConfiguration(uplink: direction, downlink: Self.direction())) == .invalidConfiguration)
        #expect(Self.code(LinkLabConfiguration(uplink: Self.direction(), downlink: direction)) == .invalidConfiguration)
    }

    @Test func pathChangesNeedAWindowShorterThanThePeriod() {
        let bad = LinkLabConfiguration(
            uplink: Self.direction(), downlink: Self.direction(),
            pathChanges: LinkLabPathChanges(kind: .resetConnections, every: 1, window: 1.5))
        #expect(Self.code(bad) == .invalidConfiguration)
        let good = LinkLabPathChanges(kind: .replaceClientAddress, every: 20)
        #expect(good.first == 20 && good.window == 1.5)
    }

    @Test func staleNamespacesAreThoseOfDeadPidsOnly() {
        let listing = """
            aether-lab-100-0-client (id: 4)
            aether-lab-100-0-server (id: 5)
            aether-lab-200-3-client
            aeb1234
            aether-lab-x-0-client
            """
        #expect(
            LinkLab.staleNamespaces(listing: listing) { $0 == 100 } == [
                "aether-lab-100-0-client", "aether-lab-100-0-server",
            ])
        #expect(LinkLab.staleNamespaces(listing: listing) { _ in false }.isEmpty)
    }

    @Test func listeningPortsAreReadFromProcNetTCP() {
        let text = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 02004D0A:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
               1: 02004D0A:C350 01004D0A:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2 1
            """
        #expect(LabCommand.listeningPorts(procNetTCP: text) == [8080])
    }

    @Test func countersSubtractAndTheHistogramGivesPercentiles() {
        var histogram = LatenessHistogram()
        for micro in [10, 20, 30, 40, 2_000, 50_000] { histogram.record(nanoseconds: Int64(micro) * 1000) }
        #expect(histogram.percentileMicroseconds(0.5) == 30)
        #expect(histogram.percentileMicroseconds(0.99) == 50_000)
        #expect(histogram.percentileMicroseconds(0.8) == 2_000)
        var later = LinkLabCounters()
        later.uplink.offered.add(1500)
        later.uplink.offered.add(1500)
        later.lateness = histogram
        var earlier = LinkLabCounters()
        earlier.uplink.offered.add(1500)
        let difference = later.since(earlier)
        #expect(difference.uplink.offered.packets == 1 && difference.uplink.offered.bytes == 1500)
        #expect(difference.lateness.count == 6)
        #expect(LatenessHistogram().percentileMicroseconds(0.5) == nil)
    }
}
