/// ChaCha20-Poly1305 IETF AEAD (RFC 8439) over libsodium.
///
/// Every failure to authenticate throws `SecurityError.authenticationFailed` with one fixed message,
/// returns no partial plaintext, and leaves caller buffers zeroed.
public enum ChaChaPoly: AEAD {
    /// Length of the authentication tag.
    public static let tagByteCount = 16

    /// A 96-bit nonce.
    public struct Nonce: Sendable, Hashable {
        /// The 12 nonce bytes.
        public let bytes: [UInt8]

        /// Parses 12 bytes.
        public init(bytes: some Collection<UInt8>) throws(SecurityError) {
            guard bytes.count == 12 else { throw SecurityError(.malformedMessage, "a nonce is 12 bytes") }
            self.bytes = Array(bytes)
        }

        /// Noise's nonce for counter `n`: four zero bytes then `n` little-endian (Noise spec 12.4 ChaChaPoly).
        public init(noiseCounter n: UInt64) {
            var bytes = [UInt8](repeating: 0, count: 12)
            for index in 0..<8 { bytes[4 + index] = UInt8(truncatingIfNeeded: n >> (8 * UInt64(index))) }
            self.bytes = bytes
        }
    }

    /// Seals `plaintext` into `output` (exactly `plaintext.count + 16` bytes: ciphertext then tag).
    /// No allocation: the record layer's hot path.
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer, nonce: Nonce,
        key: SymmetricKey, into output: UnsafeMutableRawBufferPointer
    ) throws(SecurityError) {
        guard key.bitCount == 256 else { throw SecurityError(.invalidKey, "ChaCha20-Poly1305 needs a 256-bit key") }
        guard output.count == plaintext.count + tagByteCount else {
            throw SecurityError(.invalidKey, "output must be plaintext length + 16")
        }
        let ok = unsafe key.withUnsafeBytes { keyBytes in
            unsafe nonce.bytes.withUnsafeBytes { nonceBytes in
                unsafe Sodium.chachaSeal(output, plaintext, aad, nonceBytes, keyBytes)
            }
        }
        guard ok else {
            unsafe Sodium.wipe(output)
            throw SecurityError(.authenticationFailed, "ChaCha20-Poly1305 seal failed")
        }
    }

    /// Opens `ciphertext` (ciphertext then tag) into `output` (exactly `ciphertext.count - 16` bytes).
    /// On failure `output` is zeroed and `.authenticationFailed` is thrown.
    public static func open(
        _ ciphertext: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer, nonce: Nonce,
        key: SymmetricKey, into output: UnsafeMutableRawBufferPointer
    ) throws(SecurityError) {
        guard key.bitCount == 256, ciphertext.count >= tagByteCount, output.count == ciphertext.count - tagByteCount
        else {
            unsafe Sodium.wipe(output)
            throw SecurityError.authenticationFailedError()
        }
        let ok = unsafe key.withUnsafeBytes { keyBytes in
            unsafe nonce.bytes.withUnsafeBytes { nonceBytes in
                unsafe Sodium.chachaOpen(output, ciphertext, aad, nonceBytes, keyBytes)
            }
        }
        guard ok else {
            unsafe Sodium.wipe(output)
            throw SecurityError.authenticationFailedError()
        }
    }

}
