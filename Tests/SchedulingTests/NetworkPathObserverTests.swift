import Foundation
import Synchronization
import Testing

@testable import AetherScheduling

/// Runs `ip` (iproute2) for the namespace tests.
enum IPRoute {
    static let path = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Whether the tests can create namespaces: root and iproute2 present.
    static var available: Bool { getuid() == 0 && path != nil }

    @discardableResult
    static func run(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path ?? "/usr/sbin/ip")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Counts path changes reported to it.
final class CountingResponder: PathChangeResponder {
    let count = Atomic<Int>(0)
    func pathDidChange() { count.add(1, ordering: .relaxed) }
}

@Suite(.enabled(if: IPRoute.available, "needs root and iproute2 to create a network namespace"), .serialized)
struct NetworkPathObserverTests {
    @Test func reportsVethLinksAndRoutesInATestNamespace() async throws {
        let namespace = "aether-test-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        #expect(try IPRoute.run(["netns", "add", namespace]) == 0)
        defer { _ = try? IPRoute.run(["netns", "del", namespace]) }

        let responder = CountingResponder()
        let predictor = KalmanBandwidthPredictor(KalmanEstimator())
        for t in 1...20 { predictor.update(measurement: .init(bitsPerSecond: 10e6, duration: 1, timestamp: Double(t))) }
        let varianceBefore = predictor.withEstimator { $0.covariance[0] }
        let observer = NetworkPathObserver(
            namespacePath: "/run/netns/" + namespace, responders: [responder, predictor], bufferLimit: 1024)
        let stream = try observer.start()
        // A guard against a hang if the kernel never reports: stop the observer (ending the stream) after 30 s.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(30))
            observer.stop()
        }
        defer { watchdog.cancel() }

        let ip = ["-n", namespace]
        #expect(try IPRoute.run(ip + ["link", "add", "aeth-a", "type", "veth", "peer", "name", "aeth-b"]) == 0)
        #expect(try IPRoute.run(ip + ["link", "set", "aeth-a", "up"]) == 0)
        #expect(try IPRoute.run(ip + ["link", "set", "aeth-b", "up"]) == 0)
        #expect(try IPRoute.run(ip + ["route", "add", "10.98.0.0/24", "dev", "aeth-a"]) == 0)
        #expect(try IPRoute.run(ip + ["route", "add", "default", "dev", "aeth-a"]) == 0)
        #expect(try IPRoute.run(ip + ["route", "del", "10.98.0.0/24", "dev", "aeth-a"]) == 0)
        #expect(try IPRoute.run(ip + ["link", "del", "aeth-a"]) == 0)
        // The sentinel: once its addition arrives, every earlier event has been read.
        #expect(try IPRoute.run(ip + ["link", "add", "aeth-end", "type", "veth", "peer", "name", "aeth-end2"]) == 0)

        var events: [NetworkPathEvent] = []
        for await event in stream {
            events.append(event)
            if case .linkAdded(let link) = event, link.name == "aeth-end" { break }
        }
        observer.stop()

        let added = events.compactMap { event -> NetworkLink? in
            if case .linkAdded(let link) = event { return link } else { return nil }
        }
        let changed = events.compactMap { event -> NetworkLink? in
            if case .linkChanged(let link) = event { return link } else { return nil }
        }
        let removed = events.compactMap { event -> NetworkLink? in
            if case .linkRemoved(let link) = event { return link } else { return nil }
        }
        let routesAdded = events.compactMap { event -> NetworkRoute? in
            if case .routeAdded(let route) = event { return route } else { return nil }
        }
        let routesRemoved = events.compactMap { event -> NetworkRoute? in
            if case .routeRemoved(let route) = event { return route } else { return nil }
        }
        guard let vethA = added.first(where: { $0.name == "aeth-a" }) else {
            Issue.record("no linkAdded for aeth-a in \(events)")
            return
        }
        #expect(vethA.linkKind == "veth")
        #expect(vethA.kind == .virtual)
        #expect(added.contains { $0.name == "aeth-b" })
        #expect(changed.contains { $0.name == "aeth-a" && $0.isUp })
        #expect(removed.contains { $0.name == "aeth-a" })
        #expect(
            routesAdded.contains {
                $0.family == 2 && $0.destination == [10, 98, 0, 0] && $0.prefixLength == 24
                    && $0.outputInterface == vethA.index
            })
        #expect(routesAdded.contains { $0.family == 2 && $0.prefixLength == 0 && $0.outputInterface == vethA.index })
        #expect(routesRemoved.contains { $0.destination == [10, 98, 0, 0] && $0.prefixLength == 24 })
        #expect(responder.count.load(ordering: .relaxed) >= 3)
        #expect(predictor.withEstimator { $0.covariance[0] } > varianceBefore)
    }

    @Test func aMissingNamespaceIsAnErrorNotACrash() {
        let observer = NetworkPathObserver(namespacePath: "/run/netns/aether-test-does-not-exist")
        #expect(throws: SchedulingError.self) { _ = try observer.start() }
    }

    @Test func startingTwiceIsRefused() throws {
        let namespace = "aether-test-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        #expect(try IPRoute.run(["netns", "add", namespace]) == 0)
        defer { _ = try? IPRoute.run(["netns", "del", namespace]) }
        let observer = NetworkPathObserver(namespacePath: "/run/netns/" + namespace)
        _ = try observer.start()
        #expect(throws: SchedulingError.self) { _ = try observer.start() }
        observer.stop()
    }
}
