/// Where an upload stands (the status document's `state`).
public enum UploadState: String, Sendable, Hashable, CaseIterable {
    /// Taking bytes.
    case open
    /// The object is stored and visible.
    case complete
    /// The upload cannot complete (a broken chain, a whole-object digest that did not match).
    case failed
    /// Expired or cancelled: its bytes are gone and every request answers 410.
    case expired
}
