import AetherIO

/// The public name of a paired device key (K_dev): 16 random bytes, chosen when the key is created.
///
/// Not secret (it travels in message 1 so the host can find the key), but unguessable, so it does not
/// reveal how many keys a host holds.
public struct KeyID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Length on the wire.
    public static let byteCount = 16

    /// The 16 bytes.
    public let bytes: [UInt8]

    /// A fresh random key id.
    public init() { bytes = SecureRandom.bytes(Self.byteCount) }

    /// Parses exactly 16 bytes.
    public init(bytes: some Collection<UInt8>) throws(SecurityError) {
        guard bytes.count == Self.byteCount else {
            throw SecurityError(.malformedMessage, "a key id is \(Self.byteCount) bytes, got \(bytes.count)")
        }
        self.bytes = Array(bytes)
    }

    /// Parses 32 lowercase hex digits.
    public init(hex: String) throws(SecurityError) {
        let decoded: [UInt8]
        do {
            decoded = try Hex.decodeLowercase(hex)
        } catch {
            throw SecurityError(.malformedMessage, "a key id is 32 lowercase hex digits")
        }
        try self.init(bytes: decoded)
    }

    /// 32 lowercase hex digits.
    public var hex: String { Hex.encode(bytes) }

    public var description: String { hex }

    public static func < (lhs: KeyID, rhs: KeyID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}
