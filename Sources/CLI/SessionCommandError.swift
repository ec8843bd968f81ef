/// A failure of `aether session`, printed as one line.
struct SessionCommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
    /// Whether the host never answered (another key would not help).
    var isTimeout: Bool { description.hasPrefix("timed out") }
}
