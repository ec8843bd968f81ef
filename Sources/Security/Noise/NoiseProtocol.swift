/// Constants of the one Noise protocol Aether speaks.
public enum NoiseProtocol {
    /// `Noise_NNpsk0_25519_ChaChaPoly_SHA256`.
    public static let name = "Noise_NNpsk0_25519_ChaChaPoly_SHA256"
    /// Noise's maximum message length (section 3).
    public static let maxMessageLength = 65_535

    static let nameBytes: [UInt8] = Array(name.utf8)
}
