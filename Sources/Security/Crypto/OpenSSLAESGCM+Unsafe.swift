internal import CAetherOpenSSL

/// AES-GCM (128 and 256) over libcrypto's EVP_CIPHER.
/// Part of the `OpenSSL` namespace (see `OpenSSL+Unsafe.swift`); each function names the C functions it calls.
extension OpenSSL {
    private static func gcmCipher(keyLength: Int) -> OpaquePointer? {
        switch keyLength {
        case 16: unsafe algorithms.aes128GCM
        case 32: unsafe algorithms.aes256GCM
        default: nil
        }
    }

    /// AES-GCM seal: writes ciphertext (same length as plaintext) and a 16-byte tag.
    static func aesGCMSeal(
        ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer,
        plaintext: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        key: UnsafeRawBufferPointer
    ) -> Bool {
        guard tag.count == 16 else { return false }
        return unsafe aesGCM(
            encrypt: true, output: ciphertext, input: plaintext, tag: tag.baseAddress, aad: aad, nonce: nonce, key: key)
    }

    /// AES-GCM open: writes the plaintext; false when the tag does not verify (the caller wipes `plaintext`).
    static func aesGCMOpen(
        plaintext: UnsafeMutableRawBufferPointer, ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
    ) -> Bool {
        guard tag.count == 16 else { return false }
        return unsafe aesGCM(
            encrypt: false, output: plaintext, input: ciphertext,
            tag: UnsafeMutableRawPointer(mutating: tag.baseAddress),
            aad: aad, nonce: nonce, key: key)
    }

    /// One AES-GCM pass either way: EVP_CipherInit_ex2, EVP_CipherUpdate (AAD, then the data), then for
    /// sealing EVP_CipherFinal_ex + EVP_CIPHER_CTX_ctrl(EVP_CTRL_AEAD_GET_TAG), for opening
    /// EVP_CIPHER_CTX_ctrl(EVP_CTRL_AEAD_SET_TAG) + EVP_CipherFinal_ex (the tag check).
    private static func aesGCM(
        encrypt: Bool, output: UnsafeMutableRawBufferPointer, input: UnsafeRawBufferPointer,
        tag: UnsafeMutableRawPointer?, aad: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        key: UnsafeRawBufferPointer
    ) -> Bool {
        guard let cipher = unsafe gcmCipher(keyLength: key.count), nonce.count == 12, unsafe tag != nil,
            output.count == input.count, let context = unsafe EVP_CIPHER_CTX_new()
        else { return false }
        defer { unsafe EVP_CIPHER_CTX_free(context) }
        let ok = { () -> Bool in
            guard
                unsafe EVP_CipherInit_ex2(
                    context, cipher, key.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    nonce.baseAddress?.assumingMemoryBound(to: UInt8.self), encrypt ? 1 : 0, nil) == 1
            else { return false }
            var written: Int32 = 0
            if let aadBase = aad.baseAddress, unsafe !aad.isEmpty {
                guard
                    unsafe EVP_CipherUpdate(
                        context, nil, &written, aadBase.assumingMemoryBound(to: UInt8.self), Int32(aad.count)) == 1
                else { return false }
            }
            if let inBase = input.baseAddress, let outBase = output.baseAddress, unsafe !input.isEmpty {
                guard
                    unsafe EVP_CipherUpdate(
                        context, outBase.assumingMemoryBound(to: UInt8.self), &written,
                        inBase.assumingMemoryBound(to: UInt8.self), Int32(input.count)) == 1,
                    Int(written) == input.count
                else { return false }
            }
            if !encrypt {
                guard unsafe EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, 16, tag) == 1 else { return false }
            }
            var scratch = [UInt8](repeating: 0, count: 16)
            guard
                unsafe scratch.withUnsafeMutableBufferPointer({ final in
                    unsafe EVP_CipherFinal_ex(context, final.baseAddress, &written)
                }) == 1, written == 0
            else { return false }
            return encrypt ? unsafe EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, 16, tag) == 1 : true
        }()
        if !ok { clearErrors() }
        return ok
    }
}
