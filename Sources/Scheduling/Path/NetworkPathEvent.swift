/// A change the path observer saw.
public enum NetworkPathEvent: Sendable, Equatable {
    /// A link appeared (or was reported for the first time).
    case linkAdded(NetworkLink)
    /// A link's flags or attributes changed.
    case linkChanged(NetworkLink)
    /// A link disappeared.
    case linkRemoved(NetworkLink)
    /// A route was added.
    case routeAdded(NetworkRoute)
    /// A route was removed.
    case routeRemoved(NetworkRoute)
    /// A message the observer received could not be parsed (the reason, without its bytes); the other messages of
    /// its datagram still produce their events.
    case unreadableMessage(String)

    /// Whether this change can move traffic to another path (link state, or a default route).
    public var changesPath: Bool {
        switch self {
        case .linkAdded, .linkChanged, .linkRemoved: true
        case .routeAdded(let route), .routeRemoved(let route): route.prefixLength == 0
        case .unreadableMessage: false
        }
    }
}
