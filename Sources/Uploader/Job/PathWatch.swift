import AetherScheduling
import AetherTransport
import Synchronization

/// Watches the default route while an upload runs (rtnetlink through `NetworkPathObserver`). When it moves (a phone
/// leaving Wi-Fi, a VPN coming up, the interface under it going down) the requests still running are abandoned at
/// once instead of stalling until their idle limit on the old path (`HTTPClient.abandonInFlight`: they fail as closed
/// connections, which the uploader retries from what the destination holds), the bandwidth predictor is told
/// (its process noise rises), the connections are opened again on the new path, and `changed` hears it.
/// Only default routes count: links that come and go elsewhere (containers, other network namespaces' veth ends)
/// do not move this upload's traffic. Changes closer than half a second are one change (a move is a removal and an
/// addition). Best effort: where netlink cannot be opened nothing is watched.
final class PathWatch: Sendable {
    private let observer: NetworkPathObserver
    private let task: Task<Void, Never>

    private init(observer: NetworkPathObserver, task: Task<Void, Never>) {
        self.observer = observer
        self.task = task
    }

    /// Starts watching; nil when the path cannot be observed here.
    static func start(
        client: HTTPClient, scheduler: FusionScheduler, reprobe: @escaping @Sendable () async -> Void,
        changed: @escaping @Sendable (String) -> Void
    ) -> PathWatch? {
        let observer = NetworkPathObserver()
        let events: AsyncStream<NetworkPathEvent>
        do { events = try observer.start() } catch { return nil }
        let task = Task {
            let clock = ContinuousClock()
            var last: ContinuousClock.Instant?
            for await event in events {
                guard let what = Self.defaultRouteChange(event) else { continue }
                let now = clock.now
                if let last, last.duration(to: now) < .milliseconds(500) { continue }
                last = now
                client.abandonInFlight(reason: what)
                scheduler.pathDidChange()
                changed(what)
                await reprobe()
            }
        }
        return PathWatch(observer: observer, task: task)
    }

    /// What happened, when `event` adds or removes a default route; nil for anything else.
    static func defaultRouteChange(_ event: NetworkPathEvent) -> String? {
        switch event {
        case .routeAdded(let route) where route.prefixLength == 0:
            return "a default route was added" + (route.outputInterface.map { " on interface \($0)" } ?? "")
        case .routeRemoved(let route) where route.prefixLength == 0:
            return "a default route was removed" + (route.outputInterface.map { " from interface \($0)" } ?? "")
        default:
            return nil
        }
    }

    /// Stops the observer's thread and the watch.
    func stop() {
        observer.stop()
        task.cancel()
    }
}
