import AetherIO

/// AES-GCM (NIST SP 800-38D) with 96-bit nonces and 128-bit tags over OpenSSL EVP; AES-256 for new data,
/// AES-128 accepted for vectors and peers that need it.
///
/// Every failure to authenticate throws `SecurityError.authenticationFailed` with one fixed message and
/// returns no partial plaintext: the output buffer is zeroed before the error is thrown.
public enum AESGCM {
    /// Length of the authentication tag.
    public static let tagByteCount = 16
    /// Length of the nonce.
    public static let nonceByteCount = 12

    /// A 96-bit nonce. Never reuse one under the same key; `Nonce()` draws a random one.
    public struct Nonce: Sendable, Hashable {
        /// The 12 nonce bytes.
        public let bytes: [UInt8]

        /// A random nonce from the system CSPRNG.
        public init() { bytes = SecureRandom.bytes(AESGCM.nonceByteCount) }

        /// Parses 12 bytes; any other length throws `.malformedMessage`.
        public init(bytes: some Collection<UInt8>) throws(SecurityError) {
            guard bytes.count == AESGCM.nonceByteCount else {
                throw SecurityError(.malformedMessage, "an AES-GCM nonce is 12 bytes")
            }
            self.bytes = Array(bytes)
        }
    }

    /// Seals `plaintext` and returns ciphertext || tag.
    public static func seal(
        _ plaintext: some Collection<UInt8>, authenticating aad: some Collection<UInt8> = [UInt8](), nonce: Nonce,
        key: SymmetricKey
    ) throws(SecurityError) -> [UInt8] {
        let input = Array(plaintext)
        let extra = Array(aad)
        var output = [UInt8](repeating: 0, count: input.count + tagByteCount)
        let ok = unsafe output.withUnsafeMutableBytes { out in
            unsafe input.withUnsafeBytes { p in
                unsafe extra.withUnsafeBytes { a in
                    unsafe nonce.bytes.withUnsafeBytes { n in
                        unsafe key.withUnsafeBytes { k in
                            unsafe OpenSSL.aesGCMSeal(
                                ciphertext: UnsafeMutableRawBufferPointer(rebasing: out[0..<input.count]),
                                tag: UnsafeMutableRawBufferPointer(rebasing: out[input.count...]), plaintext: p,
                                aad: a, nonce: n, key: k)
                        }
                    }
                }
            }
        }
        guard ok else {
            wipe(&output)
            throw SecurityError(.systemCall, "AES-GCM seal failed")
        }
        return output
    }

    /// Opens ciphertext || tag and returns the plaintext; any mismatch throws the one authentication error.
    public static func open(
        _ sealed: some Collection<UInt8>, authenticating aad: some Collection<UInt8> = [UInt8](), nonce: Nonce,
        key: SymmetricKey
    ) throws(SecurityError) -> [UInt8] {
        let input = Array(sealed)
        let extra = Array(aad)
        guard input.count >= tagByteCount else { throw SecurityError.authenticationFailedError() }
        let bodyCount = input.count - tagByteCount
        var output = [UInt8](repeating: 0, count: bodyCount)
        let ok = unsafe output.withUnsafeMutableBytes { out in
            unsafe input.withUnsafeBytes { c in
                unsafe extra.withUnsafeBytes { a in
                    unsafe nonce.bytes.withUnsafeBytes { n in
                        unsafe key.withUnsafeBytes { k in
                            unsafe OpenSSL.aesGCMOpen(
                                plaintext: out, ciphertext: UnsafeRawBufferPointer(rebasing: c[0..<bodyCount]),
                                tag: UnsafeRawBufferPointer(rebasing: c[bodyCount...]), aad: a, nonce: n, key: k)
                        }
                    }
                }
            }
        }
        guard ok else {
            wipe(&output)
            throw SecurityError.authenticationFailedError()
        }
        return output
    }

    /// Seals into the combined form nonce || ciphertext || tag under a fresh random nonce.
    public static func sealCombined(
        _ plaintext: some Collection<UInt8>, authenticating aad: some Collection<UInt8> = [UInt8](),
        key: SymmetricKey
    ) throws(SecurityError) -> [UInt8] {
        let nonce = Nonce()
        return try nonce.bytes + seal(plaintext, authenticating: aad, nonce: nonce, key: key)
    }

    /// Opens the combined form nonce || ciphertext || tag.
    public static func openCombined(
        _ combined: some Collection<UInt8>, authenticating aad: some Collection<UInt8> = [UInt8](),
        key: SymmetricKey
    ) throws(SecurityError) -> [UInt8] {
        let bytes = Array(combined)
        guard bytes.count >= nonceByteCount + tagByteCount else { throw SecurityError.authenticationFailedError() }
        let nonce = try Nonce(bytes: bytes[0..<nonceByteCount])
        return try open(bytes[nonceByteCount...], authenticating: aad, nonce: nonce, key: key)
    }

    private static func wipe(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }
}
