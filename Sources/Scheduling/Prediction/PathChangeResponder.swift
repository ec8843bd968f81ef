/// Something that reacts to a network path change (the path observer calls it).
public protocol PathChangeResponder: Sendable {
    /// The interface or default route changed: old measurements say less about the future.
    func pathDidChange()
}
