/// The public name of a paired device key (K_dev): 16 random bytes, chosen when the key is created.
///
/// Not secret (it travels in message 1 so the host can find the key), but unguessable, so it does not
/// reveal how many keys a host holds.
public struct KeyID: Identifier16 {
    /// What this names, for error messages.
    public static let noun = "key id"
    /// The 16 bytes.
    public let bytes: [UInt8]

    /// Wraps exactly 16 bytes; parse untrusted input with `init(bytes:)` or `init(hex:)` instead.
    public init(validatedBytes: [UInt8]) {
        precondition(validatedBytes.count == Self.byteCount, "init(validatedBytes:) takes exactly 16 bytes")
        bytes = validatedBytes
    }
}
