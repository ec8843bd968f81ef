internal import CAetherSodium

/// Raw libsodium baselines for the `session` suite. Nothing else in aether-bench imports libsodium.
enum SodiumBaseline {
    /// sodium_init
    static let ready: Bool = sodium_init() >= 0

    /// crypto_aead_chacha20poly1305_ietf_encrypt then crypto_aead_chacha20poly1305_ietf_decrypt of one
    /// record: `message.count` plaintext bytes, `aad` as associated data, the nonce from `counter`.
    static func sealOpen(
        message: UnsafeMutableRawBufferPointer, sealed: UnsafeMutableRawBufferPointer, aad: UnsafeRawBufferPointer,
        key: UnsafeRawBufferPointer, counter: UInt64
    ) -> Bool {
        guard ready, sealed.count == message.count + 16, key.count == 32 else { return false }
        var nonce: (UInt32, UInt32, UInt32) = (
            0, UInt32(truncatingIfNeeded: counter).littleEndian, UInt32(truncatingIfNeeded: counter >> 32).littleEndian
        )
        return unsafe withUnsafeBytes(of: &nonce) { nonceBytes in
            var written: UInt64 = 0
            let m = unsafe message.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let c = unsafe sealed.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let n = unsafe nonceBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let k = unsafe key.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let a = unsafe aad.baseAddress?.assumingMemoryBound(to: UInt8.self)
            guard
                unsafe crypto_aead_chacha20poly1305_ietf_encrypt(
                    c, &written, m, UInt64(message.count), a, UInt64(aad.count), nil, n, k) == 0
            else { return false }
            return unsafe crypto_aead_chacha20poly1305_ietf_decrypt(
                m, &written, nil, c, UInt64(sealed.count), a, UInt64(aad.count), n, k) == 0
        }
    }

    /// The X25519 work of one NNpsk0 handshake, both sides: two crypto_scalarmult_curve25519_base
    /// (the ephemeral public keys) and two crypto_scalarmult_curve25519 (the `ee` DH on each side).
    static func handshakeX25519(initiator: UnsafeRawBufferPointer, responder: UnsafeRawBufferPointer) -> Bool {
        guard ready, initiator.count == 32, responder.count == 32 else { return false }
        var ie = [UInt8](repeating: 0, count: 32)
        var re = [UInt8](repeating: 0, count: 32)
        var shared = [UInt8](repeating: 0, count: 32)
        let i = unsafe initiator.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let r = unsafe responder.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var ok = unsafe crypto_scalarmult_curve25519_base(&ie, i) == 0
        ok = unsafe crypto_scalarmult_curve25519_base(&re, r) == 0 && ok
        ok = unsafe crypto_scalarmult_curve25519(&shared, r, ie) == 0 && ok
        ok = unsafe crypto_scalarmult_curve25519(&shared, i, re) == 0 && ok
        return ok
    }
}
