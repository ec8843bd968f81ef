import AetherIO

/// AES-GCM (NIST SP 800-38D) with 96-bit nonces and 128-bit tags over OpenSSL EVP; AES-256 for new data,
/// AES-128 accepted for vectors and peers that need it.
///
/// Every failure to authenticate throws `SecurityError.authenticationFailed` with one fixed message and
/// returns no partial plaintext: the output buffer is zeroed before the error is thrown.
public enum AESGCM: AEAD {
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

    /// Seals `plaintext` into `output` (exactly `plaintext.count + 16` bytes: ciphertext then tag), with no
    /// allocation. On failure `output` is zeroed.
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer, nonce: Nonce,
        key: SymmetricKey, into output: UnsafeMutableRawBufferPointer
    ) throws(SecurityError) {
        guard output.count == plaintext.count + tagByteCount else {
            throw SecurityError(.invalidKey, "output must be plaintext length + 16")
        }
        let ok = unsafe nonce.bytes.withUnsafeBytes { n in
            unsafe key.withUnsafeBytes { k in
                unsafe OpenSSL.aesGCMSeal(
                    ciphertext: UnsafeMutableRawBufferPointer(rebasing: output[0..<plaintext.count]),
                    tag: UnsafeMutableRawBufferPointer(rebasing: output[plaintext.count...]), plaintext: plaintext,
                    aad: aad, nonce: n, key: k)
            }
        }
        guard ok else {
            unsafe wipe(output)
            throw SecurityError(.systemCall, "AES-GCM seal failed")
        }
    }

    /// Opens `sealed` (ciphertext then tag) into `output` (exactly `sealed.count - 16` bytes). On any failure
    /// `output` is zeroed and the one `.authenticationFailed` is thrown.
    public static func open(
        _ sealed: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer, nonce: Nonce,
        key: SymmetricKey, into output: UnsafeMutableRawBufferPointer
    ) throws(SecurityError) {
        guard sealed.count >= tagByteCount, output.count == sealed.count - tagByteCount else {
            unsafe wipe(output)
            throw SecurityError.authenticationFailedError()
        }
        let bodyCount = sealed.count - tagByteCount
        let ok = unsafe nonce.bytes.withUnsafeBytes { n in
            unsafe key.withUnsafeBytes { k in
                unsafe OpenSSL.aesGCMOpen(
                    plaintext: output, ciphertext: UnsafeRawBufferPointer(rebasing: sealed[0..<bodyCount]),
                    tag: UnsafeRawBufferPointer(rebasing: sealed[bodyCount...]), aad: aad, nonce: n, key: k)
            }
        }
        guard ok else {
            unsafe wipe(output)
            throw SecurityError.authenticationFailedError()
        }
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

    private static func wipe(_ buffer: UnsafeMutableRawBufferPointer) { unsafe Sodium.wipe(buffer) }
}
