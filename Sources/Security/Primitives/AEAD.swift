/// An AEAD with 16-byte tags (`ChaChaPoly`, `AESGCM`) in its zero-allocation buffer form; the array forms below are
/// built on it once for both.
public protocol AEAD {
    /// The cipher's nonce.
    associatedtype Nonce
    /// Length of the authentication tag.
    static var tagByteCount: Int { get }
    /// Seals `plaintext` into `output` (exactly `plaintext.count + tagByteCount` bytes: ciphertext then tag).
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer, nonce: Nonce,
        key: SymmetricKey, into output: UnsafeMutableRawBufferPointer
    ) throws(SecurityError)
    /// Opens `sealed` (ciphertext then tag) into `output` (exactly `sealed.count - tagByteCount` bytes); on any
    /// failure `output` is zeroed and the one `.authenticationFailed` is thrown.
    static func open(
        _ sealed: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer, nonce: Nonce,
        key: SymmetricKey, into output: UnsafeMutableRawBufferPointer
    ) throws(SecurityError)
}

extension AEAD {
    /// Seals `plaintext` and returns ciphertext || tag.
    public static func seal(
        _ plaintext: some Collection<UInt8>, authenticating aad: some Collection<UInt8> = [UInt8](), nonce: Nonce,
        key: SymmetricKey
    ) throws(SecurityError) -> [UInt8] {
        let input = Array(plaintext)
        return try unsafe transform(input, aad: Array(aad), outputCount: input.count + tagByteCount) {
            (p, a, out) throws(SecurityError) in
            try unsafe seal(p, authenticating: a, nonce: nonce, key: key, into: out)
        }
    }

    /// Opens ciphertext || tag and returns the plaintext; any mismatch throws the one authentication error.
    public static func open(
        _ sealed: some Collection<UInt8>, authenticating aad: some Collection<UInt8> = [UInt8](), nonce: Nonce,
        key: SymmetricKey
    ) throws(SecurityError) -> [UInt8] {
        let input = Array(sealed)
        guard input.count >= tagByteCount else { throw SecurityError.authenticationFailedError() }
        return try unsafe transform(input, aad: Array(aad), outputCount: input.count - tagByteCount) {
            (c, a, out) throws(SecurityError) in
            try unsafe open(c, authenticating: a, nonce: nonce, key: key, into: out)
        }
    }

    /// Calls `body` with `input`, `aad` and a zeroed output of `outputCount` bytes, and returns the output.
    /// Array's pointer methods rethrow untyped errors, so the typed error is carried out as a value.
    private static func transform(
        _ input: [UInt8], aad: [UInt8], outputCount: Int,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeMutableRawBufferPointer) throws(SecurityError)
            -> Void
    ) throws(SecurityError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: outputCount)
        let failure: SecurityError? = unsafe output.withUnsafeMutableBytes { out -> SecurityError? in
            unsafe input.withUnsafeBytes { i -> SecurityError? in
                unsafe aad.withUnsafeBytes { a -> SecurityError? in
                    do throws(SecurityError) {
                        try unsafe body(i, a, out)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
        }
        if let failure { throw failure }
        return output
    }
}
