/// Who asks: the name the HTTP layer authenticated (a token's name, or `loopback` without tokens). Every upload
/// belongs to the client that created it; every later call is checked against it.
public struct ClientIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The client's name (not a secret: never the token itself).
    public let name: String

    /// A client named `name`.
    public init(_ name: String) { self.name = name }

    public var description: String { name }
}
