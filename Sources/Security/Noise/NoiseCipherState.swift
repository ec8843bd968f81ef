/// Noise's CipherState (section 5.1) for ChaCha20-Poly1305: a key (or none) and a nonce counter.
///
/// A failed decryption throws and leaves the nonce where it was.
struct NoiseCipherState: Sendable {
    private(set) var key: SymmetricKey?
    private(set) var nonce: UInt64 = 0

    init() { key = nil }

    mutating func initializeKey(_ key: SymmetricKey) {
        self.key = key
        nonce = 0
    }

    /// ENCRYPT(k, n++, ad, plaintext), or the plaintext itself while there is no key.
    mutating func encrypt(_ plaintext: [UInt8], associatedData: [UInt8]) throws(SecurityError) -> [UInt8] {
        guard let key else { return plaintext }
        guard nonce < UInt64.max else { throw SecurityError(.limitExceeded, "Noise nonce exhausted") }
        let sealed = try ChaChaPoly.seal(
            plaintext, authenticating: associatedData, nonce: ChaChaPoly.Nonce(noiseCounter: nonce), key: key)
        nonce += 1
        return sealed
    }

    /// DECRYPT(k, n, ad, ciphertext); the nonce advances only when the tag verifies.
    mutating func decrypt(_ ciphertext: [UInt8], associatedData: [UInt8]) throws(SecurityError) -> [UInt8] {
        guard let key else { return ciphertext }
        guard nonce < UInt64.max else { throw SecurityError.authenticationFailedError() }
        let opened = try ChaChaPoly.open(
            ciphertext, authenticating: associatedData, nonce: ChaChaPoly.Nonce(noiseCounter: nonce), key: key)
        nonce += 1
        return opened
    }
}
