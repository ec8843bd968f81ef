import AetherIO

/// HKDF with SHA-256 (RFC 5869) over OpenSSL's `EVP_KDF` "HKDF". It returns keys, never bytes (BUG-17).
public enum HKDF {
    /// Derives a key from a key: extract with `salt`, expand with `info`.
    public static func deriveKey(
        inputKeyMaterial: SymmetricKey, salt: some Collection<UInt8>, info: some Collection<UInt8>,
        outputSize: SymmetricKey.Size = .bits256
    ) throws(SecurityError) -> SymmetricKey {
        let bytes = try deriveSecureBytes(
            inputKeyMaterial: inputKeyMaterial.secret, salt: salt, info: info, outputByteCount: outputSize.byteCount)
        return try SymmetricKey(secureBytes: bytes)
    }

    /// Derives a key from the output of a key agreement (an X25519 shared secret is never a key by itself).
    public static func deriveKey(
        sharedSecret: SharedSecret, salt: some Collection<UInt8>, info: some Collection<UInt8>,
        outputSize: SymmetricKey.Size = .bits256
    ) throws(SecurityError) -> SymmetricKey {
        let bytes = try deriveSecureBytes(
            inputKeyMaterial: sharedSecret.secret, salt: salt, info: info, outputByteCount: outputSize.byteCount)
        return try SymmetricKey(secureBytes: bytes)
    }

    /// The raw HKDF output of any length 1...8160 (255 x 32), in wiped storage. Internal: the RFC 5869
    /// vectors need lengths and input sizes no key type has; callers outside this module get keys only.
    static func deriveSecureBytes(
        inputKeyMaterial: SecureBytes, salt: some Collection<UInt8>, info: some Collection<UInt8>,
        outputByteCount: Int
    ) throws(SecurityError) -> SecureBytes {
        guard (1...(255 * 32)).contains(outputByteCount) else {
            throw SecurityError(.invalidKey, "HKDF-SHA-256 output is 1...8160 bytes, asked for \(outputByteCount)")
        }
        let saltBytes = Array(salt)
        let infoBytes = Array(info)
        return try unsafe SecureBytes(count: outputByteCount) { (out) throws(SecurityError) in
            let ok = unsafe inputKeyMaterial.withUnsafeBytes { ikm in
                unsafe saltBytes.withUnsafeBytes { saltRaw in
                    unsafe infoBytes.withUnsafeBytes { infoRaw in
                        unsafe OpenSSL.hkdf(out, ikm: ikm, salt: saltRaw, info: infoRaw)
                    }
                }
            }
            guard ok else { throw SecurityError(.systemCall, "OpenSSL HKDF-SHA-256 failed") }
        }
    }
}
