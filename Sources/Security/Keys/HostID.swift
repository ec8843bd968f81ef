/// The name of a host a device pairs with: 16 bytes, chosen by the host when it is set up.
///
/// Not secret. The key store keeps one item per host id, in a file named after its hex.
public struct HostID: Identifier16 {
    /// What this names, for error messages.
    public static let noun = "host id"
    /// The 16 bytes.
    public let bytes: [UInt8]

    /// Wraps exactly 16 bytes; parse untrusted input with `init(bytes:)` or `init(hex:)` instead.
    public init(validatedBytes: [UInt8]) {
        precondition(validatedBytes.count == Self.byteCount, "init(validatedBytes:) takes exactly 16 bytes")
        bytes = validatedBytes
    }
}
