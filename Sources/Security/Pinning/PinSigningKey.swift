import AetherIO

/// A public key trusted to sign pin updates: RSA, at least 4096 bits, verified with RSASSA-PSS/SHA-256.
/// Its id is the lowercase hex SHA-256 of its SubjectPublicKeyInfo DER, so an id names exactly one key.
public struct PinSigningKey: Sendable {
    /// Lowercase hex SHA-256 of the key's SPKI DER.
    public let id: String
    let key: OpenSSL.PublicKey

    /// Smallest accepted modulus.
    public static let minimumModulusBits = 4096

    /// Loads a `-----BEGIN PUBLIC KEY-----` PEM. Anything but an RSA key of 4096 bits or more throws `.invalidKey`.
    public init(pem: String) throws(SecurityError) {
        guard let key = OpenSSL.readPublicKey(pem: Array(pem.utf8)) else {
            throw SecurityError(.invalidKey, "not a PEM public key")
        }
        guard let bits = OpenSSL.rsaModulusBits(key), bits >= Self.minimumModulusBits else {
            throw SecurityError(.invalidKey, "a pin signing key is RSA with at least \(Self.minimumModulusBits) bits")
        }
        guard let spki = OpenSSL.subjectPublicKeyInfoDER(key) else {
            throw SecurityError(.invalidKey, "cannot encode the public key")
        }
        self.key = key
        self.id = SHA256.hash(spki).hex
    }

    /// True when `signature` is a valid RSA-PSS (SHA-256) signature of `message` by this key.
    func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        OpenSSL.verifyRSAPSS(key: key, message: message, signature: signature)
    }

    /// True when `payload` is signed by this key and names it.
    public func verifies(_ payload: PinUpdatePayload) -> Bool {
        payload.signingKeyID == id && isValidSignature(payload.signature, for: payload.signedBytes)
    }
}
