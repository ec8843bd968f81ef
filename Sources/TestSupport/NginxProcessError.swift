/// Why nginx could not be started.
public struct NginxProcessError: Error, CustomStringConvertible, Sendable {
    /// One line naming the cause and the next step.
    public let description: String
    init(_ description: String) { self.description = description }
}
