import AetherIO

/// The name of a host a device pairs with: 16 bytes, chosen by the host when it is set up.
///
/// Not secret. The key store keeps one item per host id, in a file named after its hex.
public struct HostID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Length in bytes.
    public static let byteCount = 16

    /// The 16 bytes.
    public let bytes: [UInt8]

    /// A fresh random host id.
    public init() { bytes = SecureRandom.bytes(Self.byteCount) }

    /// Parses exactly 16 bytes.
    public init(bytes: some Collection<UInt8>) throws(SecurityError) {
        guard bytes.count == Self.byteCount else {
            throw SecurityError(.malformedMessage, "a host id is \(Self.byteCount) bytes, got \(bytes.count)")
        }
        self.bytes = Array(bytes)
    }

    /// Parses 32 lowercase hex digits.
    public init(hex: String) throws(SecurityError) {
        let decoded: [UInt8]
        do {
            decoded = try Hex.decodeLowercase(hex)
        } catch {
            throw SecurityError(.malformedMessage, "a host id is 32 lowercase hex digits")
        }
        try self.init(bytes: decoded)
    }

    /// 32 lowercase hex digits.
    public var hex: String { Hex.encode(bytes) }

    public var description: String { hex }

    public static func < (lhs: HostID, rhs: HostID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}
