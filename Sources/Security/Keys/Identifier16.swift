import AetherIO

/// A public 16-byte random name (`KeyID`, `HostID`): not secret, unguessable, hex on disk and in text.
/// The parsing, hex form and ordering are shared here so the two names cannot drift apart.
public protocol Identifier16: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// What the name names, for error messages ("key id", "host id").
    static var noun: String { get }
    /// The 16 bytes.
    var bytes: [UInt8] { get }
    /// Wraps exactly 16 bytes (a programmer error otherwise); input goes through `init(bytes:)`.
    init(validatedBytes: [UInt8])
}

extension Identifier16 {
    /// Length in bytes.
    public static var byteCount: Int { 16 }

    /// A fresh random name.
    public init() { self.init(validatedBytes: SecureRandom.bytes(Self.byteCount)) }

    /// Parses exactly 16 bytes.
    public init(bytes: some Collection<UInt8>) throws(SecurityError) {
        guard bytes.count == Self.byteCount else {
            throw SecurityError(.malformedMessage, "a \(Self.noun) is \(Self.byteCount) bytes, got \(bytes.count)")
        }
        self.init(validatedBytes: Array(bytes))
    }

    /// Parses 32 lowercase hex digits.
    public init(hex: String) throws(SecurityError) {
        let decoded: [UInt8]
        do {
            decoded = try Hex.decodeLowercase(hex)
        } catch {
            throw SecurityError(.malformedMessage, "a \(Self.noun) is 32 lowercase hex digits")
        }
        try self.init(bytes: decoded)
    }

    /// 32 lowercase hex digits.
    public var hex: String { Hex.encode(bytes) }

    public var description: String { hex }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}
