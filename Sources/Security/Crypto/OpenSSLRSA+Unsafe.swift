internal import CAetherOpenSSL

/// RSA public keys and RSA-PSS verification over libcrypto's EVP_PKEY.
/// Part of the `OpenSSL` namespace (see `OpenSSL+Unsafe.swift`); each function names the C functions it calls.
extension OpenSSL {
    /// An EVP_PKEY holding a public key, freed with EVP_PKEY_free.
    @safe final class PublicKey: @unchecked Sendable {
        // @unchecked: the EVP_PKEY is never modified after loading; OpenSSL 3 allows concurrent verifies.
        let pointer: OpaquePointer

        init(_ pointer: OpaquePointer) { unsafe self.pointer = pointer }

        deinit { unsafe EVP_PKEY_free(pointer) }
    }

    /// BIO_new_mem_buf + PEM_read_bio_PUBKEY: a SubjectPublicKeyInfo PEM ("BEGIN PUBLIC KEY").
    static func readPublicKey(pem: [UInt8]) -> PublicKey? {
        let key = unsafe pem.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = unsafe BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { unsafe BIO_free(bio) }
            return unsafe PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        guard let key = unsafe key else {
            clearErrors()
            return nil
        }
        return unsafe PublicKey(key)
    }

    /// EVP_PKEY_get_base_id + EVP_PKEY_get_bits: the modulus size of an RSA key, nil for any other kind.
    static func rsaModulusBits(_ key: PublicKey) -> Int? {
        guard unsafe EVP_PKEY_get_base_id(key.pointer) == EVP_PKEY_RSA else { return nil }
        return Int(unsafe EVP_PKEY_get_bits(key.pointer))
    }

    /// i2d_PUBKEY: the key's SubjectPublicKeyInfo DER.
    static func subjectPublicKeyInfoDER(_ key: PublicKey) -> [UInt8]? {
        let length = unsafe i2d_PUBKEY(key.pointer, nil)
        guard length > 0 else {
            clearErrors()
            return nil
        }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = unsafe der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return unsafe i2d_PUBKEY(key.pointer, &cursor)
        }
        guard written == length else {
            clearErrors()
            return nil
        }
        return der
    }

    /// EVP_DigestVerifyInit(SHA-256) + EVP_PKEY_CTX_set_rsa_padding(PSS) + EVP_PKEY_CTX_set_rsa_pss_saltlen(digest)
    /// + EVP_PKEY_CTX_set_rsa_mgf1_md(SHA-256) + EVP_DigestVerify: RSASSA-PSS, SHA-256, MGF1-SHA-256, 32-byte salt.
    static func verifyRSAPSS(key: PublicKey, message: [UInt8], signature: [UInt8]) -> Bool {
        guard let context = unsafe EVP_MD_CTX_new() else { return false }
        defer { unsafe EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard unsafe EVP_DigestVerifyInit(context, &keyContext, EVP_sha256(), nil, key.pointer) == 1,
            let keyContext = unsafe keyContext,
            unsafe EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
            unsafe EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, RSA_PSS_SALTLEN_DIGEST) == 1,
            unsafe EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, EVP_sha256()) == 1
        else {
            clearErrors()
            return false
        }
        let ok = unsafe signature.withUnsafeBufferPointer { sig in
            unsafe message.withUnsafeBufferPointer { msg in
                unsafe EVP_DigestVerify(context, sig.baseAddress, sig.count, msg.baseAddress, msg.count) == 1
            }
        }
        if !ok { clearErrors() }
        return ok
    }
}
