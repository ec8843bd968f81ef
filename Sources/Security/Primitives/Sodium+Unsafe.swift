internal import CAetherSodium

/// Every call into libsodium made by AetherSecurity. Nothing else in this module imports it.
enum Sodium {
    /// sodium_init, once per process.
    static let ready: Bool = sodium_init() >= 0

    /// crypto_scalarmult_curve25519_base: the public key of a private scalar.
    static func x25519Base(_ publicKey: UnsafeMutableRawBufferPointer, _ secret: UnsafeRawBufferPointer) -> Bool {
        guard ready, publicKey.count == 32, secret.count == 32 else { return false }
        return unsafe crypto_scalarmult_curve25519_base(
            publicKey.baseAddress!.assumingMemoryBound(to: UInt8.self),
            secret.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
    }

    /// crypto_scalarmult_curve25519. libsodium returns -1 for a small-order point or an all-zero result.
    static func x25519(
        _ shared: UnsafeMutableRawBufferPointer, _ secret: UnsafeRawBufferPointer, _ peer: UnsafeRawBufferPointer
    ) -> Bool {
        guard ready, shared.count == 32, secret.count == 32, peer.count == 32 else { return false }
        return unsafe crypto_scalarmult_curve25519(
            shared.baseAddress!.assumingMemoryBound(to: UInt8.self),
            secret.baseAddress!.assumingMemoryBound(to: UInt8.self),
            peer.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
    }

    /// crypto_aead_chacha20poly1305_ietf_encrypt: writes ciphertext || 16-byte tag into `out`.
    static func chachaSeal(
        _ out: UnsafeMutableRawBufferPointer, _ plaintext: UnsafeRawBufferPointer, _ aad: UnsafeRawBufferPointer,
        _ nonce: UnsafeRawBufferPointer, _ key: UnsafeRawBufferPointer
    ) -> Bool {
        guard ready, out.count == plaintext.count + 16, nonce.count == 12, key.count == 32 else { return false }
        var written: UInt64 = 0
        return unsafe crypto_aead_chacha20poly1305_ietf_encrypt(
            out.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
            plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
            aad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(aad.count), nil,
            nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
            key.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0 && written == UInt64(out.count)
    }

    /// crypto_aead_chacha20poly1305_ietf_decrypt: verifies the tag and writes the plaintext into `out`.
    /// libsodium writes nothing to `out` when the tag does not verify.
    static func chachaOpen(
        _ out: UnsafeMutableRawBufferPointer, _ ciphertext: UnsafeRawBufferPointer, _ aad: UnsafeRawBufferPointer,
        _ nonce: UnsafeRawBufferPointer, _ key: UnsafeRawBufferPointer
    ) -> Bool {
        guard ready, ciphertext.count >= 16, out.count == ciphertext.count - 16, nonce.count == 12, key.count == 32
        else { return false }
        var written: UInt64 = 0
        return unsafe crypto_aead_chacha20poly1305_ietf_decrypt(
            out.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil,
            ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
            aad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(aad.count),
            nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
            key.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0 && written == UInt64(out.count)
    }

    /// sodium_memzero
    static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        unsafe sodium_memzero(base, buffer.count)
    }
}
