/// A failure of `aether session`, printed as one line.
struct SessionCommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
