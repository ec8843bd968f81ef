import Foundation
import Testing

@testable import AetherLinkLab

#if canImport(Glibc)
    import Glibc
#endif

/// The lab checks itself on the real kernel (root only; skipped otherwise): the round trip is the set delay, a TCP
/// transfer runs at the set rate, a UDP burst loses the set share, the congestion control is the one chosen, a path
/// change resets open connections and refuses new ones for its window, an address replacement kills the old
/// connection and lets a new one through from the new address, and teardown and the stale sweep leave nothing.
/// The bands are generous: they check that the lab works, not how fast the machine is.
@Suite(
    .serialized,
    .enabled(if: LinkLab.unavailableReason() == nil && FileManager.default.fileExists(atPath: LinkLabPeers.python)))
struct LinkLabLiveTests {
    static let port = 9400

    static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "aether-linklab-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    static func link(
        delay: Double, rate: Double, loss: Double = 0, queue: LinkLabQueueLimit = .time(0.1),
        pathChanges: LinkLabPathChanges? = nil, control: LinkLabCongestionControl = .cubic, seed: UInt64 = 1
    ) -> LinkLabConfiguration {
        LinkLabConfiguration(
            uplink: LinkLabDirection(
                delay: delay, lossRate: loss, rate: .constant(megabitsPerSecond: rate), queueLimit: queue),
            downlink: LinkLabDirection(delay: delay, rate: .constant(megabitsPerSecond: 100)),
            pathChanges: pathChanges, clientCongestionControl: control, seed: seed)
    }

    /// Starts the Python TCP server in the server namespace and waits until it listens.
    static func server(_ lab: LinkLab, mode: String, logs: String) async throws -> LinkLabProcess {
        let server = try lab.start(
            [LinkLabPeers.python, "-c", LinkLabPeers.server, lab.serverAddress, "\(port)", mode], in: .server,
            logs: logs)
        _ = try await server.waitForLine(startingWith: "ready", timeout: 20)
        try await lab.waitForListener(port: port, timeout: 10)
        return server
    }

    @Test func theRoundTripIsTwiceTheOneWayDelayAndTheCongestionControlIsTheOneChosen() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lab = try LinkLab(Self.link(delay: 0.02, rate: 50, control: .reno))
        defer { lab.tearDown() }
        #expect(try lab.sysctlValue("net.ipv4.tcp_congestion_control", in: .client) == "reno")
        #expect(try lab.sysctlValue("net.ipv4.tcp_no_metrics_save", in: .client) == "1")
        _ = try await Self.server(lab, mode: "echo", logs: directory + "/server")
        let run = try await lab.run(
            [LinkLabPeers.python, "-c", LinkLabPeers.connectTimes, lab.serverAddress, "\(Self.port)", "7"],
            timeout: 30, logs: directory + "/client")
        let fields = run.output.split(separator: " ")
        let rtt = try #require(fields.count == 3 ? Double(fields[1]) : nil, "client said: \(run.output)")
        // 2 x 20 ms plus a SYN's and a SYN-ACK's serialization (microseconds) and the relay's lateness.
        #expect(rtt >= 39.5 && rtt <= 45, "median connect time \(rtt) ms")
        #expect(fields[2].hasPrefix("reno"))
        // The connections crossed the relay: their SYNs, ACKs and FINs.
        #expect(run.counters.uplink.delivered.packets >= 7 * 3)
        #expect(run.counters.uplink.dropped.packets == 0)

        // Another control for the connections opened after, allowed on the host first when it was not.
        try lab.setClientCongestionControl(.cubic)
        #expect(
            try LabCommand.read("/proc/sys/net/ipv4/tcp_allowed_congestion_control").split(separator: " ").contains(
                "cubic"))
        let again = try await lab.run(
            [LinkLabPeers.python, "-c", LinkLabPeers.connectTimes, lab.serverAddress, "\(Self.port)", "1"],
            timeout: 30, logs: directory + "/again")
        #expect(again.output.hasSuffix("cubic\n"), "client said: \(again.output)")
    }

    @Test func aTransferRunsAtTheSetRate() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lab = try LinkLab(Self.link(delay: 0.01, rate: 10))
        defer { lab.tearDown() }
        let server = try await Self.server(lab, mode: "sink", logs: directory + "/server")
        let bytes = 3_000_000
        let run = try await lab.run(
            [LinkLabPeers.python, "-c", LinkLabPeers.send, lab.serverAddress, "\(Self.port)", "\(bytes)"],
            timeout: 30, logs: directory + "/client")
        #expect(run.status == 0, "client: \(run.errorTail)")
        let line = try await server.waitForLine(startingWith: "received", timeout: 10).split(separator: " ")
        #expect(line.count == 3 && Int(line[1]) == bytes)
        let seconds = try #require(line.count == 3 ? Double(line[2]) : nil)
        // Goodput at 10 Mbit/s of 1500-byte packets carrying 1448 bytes (timestamps on): 9.65 Mbit/s. The upper
        // bound is the shaper's (nothing crosses faster); the lower is generous for a loaded machine.
        let megabits = Double(bytes) * 8 / seconds / 1e6
        let limit = 10 * 1448.0 / 1500
        #expect(megabits <= limit * 1.03 && megabits >= limit * 0.8, "\(megabits) Mbit/s against \(limit)")
        #expect(run.counters.uplink.deliveredTCPPayloadBytes >= Int64(bytes))
        #expect(run.counters.uplink.droppedLoss.packets == 0)
    }

    @Test func aUDPBurstLosesTheSetShareWithinThreeSigma() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loss = 0.05
        let lab = try LinkLab(Self.link(delay: 0.005, rate: 20, loss: loss, queue: .bytes(4 << 20), seed: 25))
        defer { lab.tearDown() }
        let receiver = try lab.start(
            [LinkLabPeers.python, "-c", LinkLabPeers.udpReceiver, lab.serverAddress, "\(Self.port)"], in: .server,
            logs: directory + "/receiver")
        _ = try await receiver.waitForLine(startingWith: "ready", timeout: 20)
        let count = 3000
        let before = lab.counters()
        let run = try await lab.run(
            [LinkLabPeers.python, "-c", LinkLabPeers.udpSender, lab.serverAddress, "\(Self.port)", "\(count)"],
            timeout: 30, logs: directory + "/sender")
        #expect(run.status == 0)
        let received = try #require(
            Int(try await receiver.waitForLine(startingWith: "count", timeout: 10).dropFirst("count ".count)))
        let uplink = lab.counters().since(before).uplink
        // Every datagram reached the relay, none was dropped but by the loss draw, and the rest arrived.
        #expect(uplink.offered.packets == Int64(count))
        #expect(uplink.droppedQueue.packets == 0 && uplink.droppedOther.packets == 0)
        #expect(received + Int(uplink.droppedLoss.packets) == count)
        let share = Double(count - received) / Double(count)
        let sigma = (loss * (1 - loss) / Double(count)).squareRoot()
        #expect(abs(share - loss) <= 3 * sigma, "lost \(share) against \(loss) (sigma \(sigma))")
    }

    @Test func aScheduledPathChangeResetsAnIdleConnectionAndRefusesNewOnesForItsWindow() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let changes = LinkLabPathChanges(kind: .resetConnections, every: 60, window: 1, first: 1.5)
        let lab = try LinkLab(Self.link(delay: 0.01, rate: 20, pathChanges: changes))
        defer { lab.tearDown() }
        let server = try await Self.server(lab, mode: "echo", logs: directory + "/server")
        lab.restartClock()
        let client = try lab.start(
            [LinkLabPeers.python, "-c", LinkLabPeers.holder, lab.serverAddress, "\(Self.port)"], in: .client,
            logs: directory + "/client")
        _ = try await client.waitForLine(startingWith: "connected", timeout: 10)
        // Nothing is sent on the connection: only the lab's resets can end it, at 1.5 s.
        #expect(try await client.waitForLine(startingWith: "old", timeout: 10) == "old reset")
        client.send("again\n")
        let new = try await client.waitForLine(startingWith: "new ok", timeout: 10)
        #expect(client.output.contains("refused\n"), "client: \(client.output)")
        let after = try #require(Double(new.split(separator: " ").last ?? ""))
        #expect(after >= 0.5, "reconnected \(after) s after the reset, in a 1 s window")
        // The server's end was reset too.
        _ = try await server.waitForLine(startingWith: "reset", timeout: 5)
        let counters = lab.counters()
        #expect(counters.pathChanges == 1)
        #expect(counters.uplink.resetsInjected >= 1 && counters.downlink.resetsInjected >= 1)
    }

    @Test func anAddressReplacementKillsTheOldConnectionAndANewOneComesFromTheNewAddress() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lab = try LinkLab(Self.link(delay: 0.01, rate: 20))
        defer { lab.tearDown() }
        let server = try await Self.server(lab, mode: "echo", logs: directory + "/server")
        let client = try lab.start(
            [LinkLabPeers.python, "-c", LinkLabPeers.holder, lab.serverAddress, "\(Self.port)"], in: .client,
            logs: directory + "/client")
        let old = lab.clientAddress
        #expect(try await client.waitForLine(startingWith: "connected", timeout: 10) == "connected \(old)")
        lab.changePath(.replaceClientAddress, window: 0.3)
        #expect(try await client.waitForLine(startingWith: "old", timeout: 10) == "old reset")
        let deadline = LinkLab.seconds() + 10
        while lab.addressChanges == 0 && LinkLab.seconds() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        let new = lab.clientAddress
        #expect(new != old && lab.lastError == nil)
        client.send("again\n")
        #expect(try await client.waitForLine(startingWith: "new ", timeout: 15) == "new \(new)")
        _ = try await client.waitForLine(startingWith: "new ok", timeout: 10)
        #expect(server.output.contains("accepted \(new)\n"))
        // Only the client's end was reset (its system closed the sockets of the lost network).
        let counters = lab.counters()
        #expect(counters.uplink.resetsInjected == 0 && counters.downlink.resetsInjected >= 1)
        #expect(try !LabCommand.run(lab.command([LabCommand.ip, "-4", "address"], in: .client)).contains(old + "/"))
    }

    @Test func aDeviceRemovedUnderTheRelayStopsItWithAReasonInsteadOfSpinning() async throws {
        let lab = try LinkLab(Self.link(delay: 0.001, rate: 10))
        defer { lab.tearDown() }
        try LabCommand.run([LabCommand.ip, "-n", lab.clientNamespace, "link", "delete", lab.clientDevice])
        let deadline = LinkLab.seconds() + 5
        while lab.lastError == nil && LinkLab.seconds() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        #expect(lab.lastError?.contains("client's TUN device") == true, "\(lab.lastError ?? "no error")")
        // Stopped: its life and CPU time no longer grow.
        let stopped = lab.counters()
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(lab.counters().relaySeconds == stopped.relaySeconds)
        #expect(lab.counters().relayCPUSeconds == stopped.relayCPUSeconds)
    }

    @Test func tearingDownRemovesTheNamespacesAndTheSweepRemovesThoseOfDeadProcessesOnly() throws {
        let lab = try LinkLab(Self.link(delay: 0.001, rate: 10))
        let names = [lab.clientNamespace, lab.serverNamespace]
        #expect(names.allSatisfy { (try? LabCommand.run([LabCommand.ip, "netns", "list"]))?.contains($0) == true })
        lab.tearDown()
        let listing = try LabCommand.run([LabCommand.ip, "netns", "list"])
        #expect(names.allSatisfy { !listing.contains($0) })

        // A pid that has exited, and this process's own.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let stale = "\(LinkLab.prefix)\(gone.processIdentifier)-0-client"
        let live = "\(LinkLab.prefix)\(getpid())-9999-client"
        try LabCommand.run([LabCommand.ip, "netns", "add", stale])
        try LabCommand.run([LabCommand.ip, "netns", "add", live])
        defer { LinkLab.removeNamespaces([stale, live]) }
        let removed = LinkLab.sweepStaleLabs()
        #expect(removed.contains(stale) && !removed.contains(live))
        let after = try LabCommand.run([LabCommand.ip, "netns", "list"])
        #expect(!after.contains(stale) && after.contains(live))
    }
}
