internal import AetherIO
internal import CAetherOpenSSL

/// Every call into OpenSSL (libcrypto and libssl) made by AetherSecurity. Nothing else in this module
/// imports it. Each function names the C functions it calls; every failure returns `false`/`nil` after
/// clearing OpenSSL's thread-local error queue, and the typed errors are made by the callers.
enum OpenSSL {
    // MARK: - Algorithms fetched once

    /// The HKDF and AES-GCM implementations, fetched from the default provider once per process.
    @safe final class Algorithms: @unchecked Sendable {
        // @unchecked: fetched EVP_KDF / EVP_CIPHER objects are immutable and may be shared by threads.
        let hkdf: OpaquePointer?
        let aes128GCM: OpaquePointer?
        let aes256GCM: OpaquePointer?

        /// EVP_KDF_fetch("HKDF"), EVP_CIPHER_fetch("AES-128-GCM"), EVP_CIPHER_fetch("AES-256-GCM")
        init() {
            unsafe hkdf = unsafe EVP_KDF_fetch(nil, "HKDF", nil)
            unsafe aes128GCM = unsafe EVP_CIPHER_fetch(nil, "AES-128-GCM", nil)
            unsafe aes256GCM = unsafe EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)
        }
    }

    static let algorithms = Algorithms()

    /// ERR_clear_error: failures leave nothing behind for the next caller on this thread.
    static func clearErrors() { ERR_clear_error() }

    // MARK: - HKDF-SHA-256 (RFC 5869)

    private static let paramDigest: StaticString = "digest"
    private static let paramKey: StaticString = "key"
    private static let paramSalt: StaticString = "salt"
    private static let paramInfo: StaticString = "info"
    private static let sha256Name: StaticString = "SHA256"

    private static func cString(_ text: StaticString) -> UnsafeMutablePointer<CChar> {
        unsafe UnsafeMutableRawPointer(mutating: text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// EVP_KDF_CTX_new + EVP_KDF_derive (+ EVP_KDF_CTX_free): HKDF extract-then-expand with SHA-256.
    static func hkdf(
        _ out: UnsafeMutableRawBufferPointer, ikm: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
        info: UnsafeRawBufferPointer
    ) -> Bool {
        guard let kdf = unsafe algorithms.hkdf, let outBase = out.baseAddress, unsafe !out.isEmpty else {
            return false
        }
        guard let context = unsafe EVP_KDF_CTX_new(kdf) else { return false }
        defer { unsafe EVP_KDF_CTX_free(context) }
        // OpenSSL wants non-NULL buffers even for zero lengths; a zero-length salt means "HashLen zeros".
        var dummy: UInt8 = 0
        let ok = unsafe withUnsafeMutablePointer(to: &dummy) { dummyPointer -> Bool in
            let empty = UnsafeMutableRawPointer(dummyPointer)
            var params: [OSSL_PARAM] = unsafe [
                OSSL_PARAM_construct_utf8_string(cString(paramDigest), cString(sha256Name), 0),
                OSSL_PARAM_construct_octet_string(
                    cString(paramKey), UnsafeMutableRawPointer(mutating: ikm.baseAddress) ?? empty, ikm.count),
                OSSL_PARAM_construct_octet_string(
                    cString(paramSalt), UnsafeMutableRawPointer(mutating: salt.baseAddress) ?? empty, salt.count),
            ]
            if unsafe !info.isEmpty {
                unsafe params.append(
                    OSSL_PARAM_construct_octet_string(
                        cString(paramInfo), UnsafeMutableRawPointer(mutating: info.baseAddress) ?? empty, info.count))
            }
            unsafe params.append(OSSL_PARAM_construct_end())
            return unsafe params.withUnsafeBufferPointer { list in
                unsafe EVP_KDF_derive(
                    context, outBase.assumingMemoryBound(to: UInt8.self), out.count, list.baseAddress) == 1
            }
        }
        if !ok { clearErrors() }
        return ok
    }

    // MARK: - AES-GCM

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

    // MARK: - RSA public keys and RSA-PSS

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

    // MARK: - X.509

    /// X509_get_X509_PUBKEY + i2d_X509_PUBKEY: a certificate's SubjectPublicKeyInfo DER.
    private static func subjectPublicKeyInfoDER(certificate: OpaquePointer) -> [UInt8]? {
        guard let publicKey = unsafe X509_get_X509_PUBKEY(certificate) else { return nil }
        let length = unsafe i2d_X509_PUBKEY(publicKey, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = unsafe der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return unsafe i2d_X509_PUBKEY(publicKey, &cursor)
        }
        return written == length ? der : nil
    }

    /// d2i_X509 (+ X509_free): the SPKI DER of one DER certificate. Nil for anything that is not exactly one
    /// certificate (garbage, truncation, trailing bytes).
    static func subjectPublicKeyInfoDER(certificateDER der: [UInt8]) -> [UInt8]? {
        guard !der.isEmpty, der.count < Int(Int32.max) else { return nil }
        let result = unsafe der.withUnsafeBufferPointer { buffer -> [UInt8]? in
            guard let start = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = unsafe start
            guard let certificate = unsafe d2i_X509(nil, &cursor, buffer.count) else { return nil }
            defer { unsafe X509_free(certificate) }
            guard let end = unsafe cursor, unsafe end == start + buffer.count else { return nil }
            return unsafe subjectPublicKeyInfoDER(certificate: certificate)
        }
        if result == nil { clearErrors() }
        return result
    }

    /// BIO_new_mem_buf + PEM_read_bio_X509 (repeated) + i2d_X509: every certificate in a PEM text, as DER.
    /// Nil when the text holds no certificate or a damaged one.
    static func certificatesDER(pem: [UInt8]) -> [[UInt8]]? {
        let result = unsafe pem.withUnsafeBytes { raw -> [[UInt8]]? in
            guard let bio = unsafe BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { unsafe BIO_free(bio) }
            var certificates: [[UInt8]] = []
            while let certificate = unsafe PEM_read_bio_X509(bio, nil, nil, nil) {
                defer { unsafe X509_free(certificate) }
                let length = unsafe i2d_X509(certificate, nil)
                guard length > 0 else { return nil }
                var der = [UInt8](repeating: 0, count: Int(length))
                let written = unsafe der.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    var cursor = buffer.baseAddress
                    return unsafe i2d_X509(certificate, &cursor)
                }
                guard written == length else { return nil }
                certificates.append(der)
            }
            // The loop ends at end of input (PEM_R_NO_START_LINE) or at a damaged block; tell them apart.
            let reason = ERR_GET_REASON(ERR_peek_last_error())
            guard reason == PEM_R_NO_START_LINE else { return nil }
            return certificates.isEmpty ? nil : certificates
        }
        clearErrors()
        return result
    }

    // MARK: - TLS: the pin check as libssl's certificate verification

    /// The SSL_CTX ex_data slot that owns the pin manager's retained reference; the free callback
    /// releases it when the SSL_CTX is freed.
    private static let managerSlot: Int32 = unsafe CRYPTO_get_ex_new_index(
        CRYPTO_EX_INDEX_SSL_CTX, 0, nil, nil, nil,
        { _, pointer, _, _, _, _ in
            guard let pointer = unsafe pointer else { return }
            unsafe Unmanaged<CertificatePinManager>.fromOpaque(pointer).release()
        })

    /// X509_verify_cert (the default chain validation: signatures, validity, purpose, host name), then
    /// X509_STORE_CTX_get0_chain + the SPKI pins of the verified chain. On a pin mismatch the store's error is set
    /// with X509_STORE_CTX_set_error(X509_V_ERR_APPLICATION_VERIFICATION). Synchronous (RACE-6).
    static func verifyChain(storeContext: OpaquePointer, manager: CertificatePinManager) -> Bool {
        guard unsafe X509_verify_cert(storeContext) == 1 else { return false }
        guard let chain = unsafe X509_STORE_CTX_get0_chain(storeContext) else {
            unsafe X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
            return false
        }
        let stack = unsafe chain
        let count = unsafe OPENSSL_sk_num(stack)
        var pins: [SPKIPin] = []
        for index in 0..<max(count, 0) {
            guard let raw = unsafe OPENSSL_sk_value(stack, index),
                let spki = unsafe subjectPublicKeyInfoDER(certificate: OpaquePointer(raw))
            else {
                unsafe X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
                return false
            }
            pins.append(SPKIPin(digest: SHA256.hash(spki)))
        }
        guard manager.isTrusted(spkiChain: pins) else {
            unsafe X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
            return false
        }
        return true
    }

    /// SSL_CTX_ctrl(SSL_CTRL_GET/SET_MIN_PROTO_VERSION), SSL_CTX_get_verify_mode, SSL_CTX_get_verify_callback,
    /// SSL_CTX_set_verify, SSL_CTX_get_ex_data/SSL_CTX_set_ex_data, SSL_CTX_set_cert_verify_callback.
    /// Raises (never lowers) the minimum version to TLS 1.2, forces SSL_VERIFY_PEER, and makes the pin check
    /// (after the default chain validation) the context's certificate verification.
    static func installPinning(sslContext: OpaquePointer, manager: CertificatePinManager) -> Bool {
        let minimum = unsafe SSL_CTX_ctrl(sslContext, SSL_CTRL_GET_MIN_PROTO_VERSION, 0, nil)
        if minimum == 0 || minimum < TLS1_2_VERSION {
            guard unsafe SSL_CTX_ctrl(sslContext, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil) == 1
            else {
                clearErrors()
                return false
            }
        }
        let mode = unsafe SSL_CTX_get_verify_mode(sslContext)
        let existing = unsafe SSL_CTX_get_verify_callback(sslContext)
        unsafe SSL_CTX_set_verify(sslContext, mode | SSL_VERIFY_PEER, existing)

        let slot = managerSlot
        guard slot >= 0 else { return false }
        if let previous = unsafe SSL_CTX_get_ex_data(sslContext, slot) {
            unsafe Unmanaged<CertificatePinManager>.fromOpaque(previous).release()
        }
        let retained = unsafe Unmanaged.passRetained(manager).toOpaque()
        guard unsafe SSL_CTX_set_ex_data(sslContext, slot, retained) == 1 else {
            unsafe Unmanaged<CertificatePinManager>.fromOpaque(retained).release()
            clearErrors()
            return false
        }
        unsafe SSL_CTX_set_cert_verify_callback(
            sslContext,
            { storeContext, argument in
                guard let storeContext = unsafe storeContext, let argument = unsafe argument else { return 0 }
                let manager = unsafe Unmanaged<CertificatePinManager>.fromOpaque(argument).takeUnretainedValue()
                return unsafe OpenSSL.verifyChain(storeContext: storeContext, manager: manager) ? 1 : 0
            }, retained)
        return true
    }

    /// For tests of the "never lower, never skip" rules: SSL_CTX_new(TLS_client_method), SSL_CTX_ctrl
    /// (SSL_CTRL_SET_MIN_PROTO_VERSION), SSL_CTX_set_verify with `verifyMode`, installPinning, then reads back
    /// the minimum version and the verify mode (SSL_CTX_ctrl(SSL_CTRL_GET_MIN_PROTO_VERSION),
    /// SSL_CTX_get_verify_mode) and frees the context (SSL_CTX_free, which releases the manager).
    static func installProbe(
        minimumVersion: Int, verifyMode: Int32, manager: CertificatePinManager
    ) -> (minimumVersion: Int, verifyMode: Int32)? {
        defer { clearErrors() }
        guard let context = unsafe SSL_CTX_new(TLS_client_method()) else { return nil }
        defer { unsafe SSL_CTX_free(context) }
        guard unsafe SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, minimumVersion, nil) == 1 else { return nil }
        unsafe SSL_CTX_set_verify(context, verifyMode, nil)
        guard unsafe installPinning(sslContext: context, manager: manager) else { return nil }
        return unsafe (
            SSL_CTX_ctrl(context, SSL_CTRL_GET_MIN_PROTO_VERSION, 0, nil), SSL_CTX_get_verify_mode(context)
        )
    }

    /// What a pinned handshake came to.
    enum HandshakeOutcome {
        case connected(version: String)
        case pinRejected
        case chainRejected(reason: String)
        case failed(reason: String)
    }

    /// A TLS client handshake on libssl: SSL_CTX_new(TLS_client_method), SSL_CTX_load_verify_locations or
    /// SSL_CTX_set_default_verify_paths, installPinning, SSL_new, BIO_new_connect + BIO_ctrl(BIO_C_DO_STATE_MACHINE),
    /// SSL_set_bio, SSL_set1_host, SSL_ctrl(SSL_CTRL_SET_TLSEXT_HOSTNAME), SSL_connect, SSL_get_verify_result,
    /// SSL_get_version, SSL_shutdown, SSL_free, SSL_CTX_free.
    static func handshake(
        address: String, serverName: String, trustAnchorsFile: String?, manager: CertificatePinManager
    ) -> HandshakeOutcome {
        defer { clearErrors() }
        guard let context = unsafe SSL_CTX_new(TLS_client_method()) else { return .failed(reason: "SSL_CTX_new") }
        defer { unsafe SSL_CTX_free(context) }
        if let trustAnchorsFile {
            guard unsafe SSL_CTX_load_verify_locations(context, trustAnchorsFile, nil) == 1 else {
                return .failed(reason: "cannot load the trust anchors")
            }
        } else {
            guard unsafe SSL_CTX_set_default_verify_paths(context) == 1 else {
                return .failed(reason: "cannot load the system trust store")
            }
        }
        guard unsafe installPinning(sslContext: context, manager: manager) else {
            return .failed(reason: "cannot install the pin check")
        }
        guard let ssl = unsafe SSL_new(context) else { return .failed(reason: "SSL_new") }
        defer { unsafe SSL_free(ssl) }
        guard let bio = unsafe BIO_new_connect(address) else { return .failed(reason: "BIO_new_connect") }
        guard unsafe BIO_ctrl(bio, BIO_C_DO_STATE_MACHINE, 0, nil) > 0 else {
            unsafe BIO_free_all(bio)
            return .failed(reason: "cannot connect to \(address)")
        }
        unsafe SSL_set_bio(ssl, bio, bio)  // the SSL now owns the BIO
        guard unsafe SSL_set1_host(ssl, serverName) == 1 else { return .failed(reason: "SSL_set1_host") }
        let sni = unsafe serverName.withCString { name in
            unsafe SSL_ctrl(
                ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name),
                UnsafeMutableRawPointer(mutating: name))
        }
        guard sni == 1 else { return .failed(reason: "cannot set the server name") }
        guard unsafe SSL_connect(ssl) == 1 else {
            let result = unsafe SSL_get_verify_result(ssl)
            if result == X509_V_ERR_APPLICATION_VERIFICATION { return .pinRejected }
            if result != X509_V_OK {
                let text = unsafe X509_verify_cert_error_string(result).map { unsafe String(cString: $0) } ?? "unknown"
                return .chainRejected(reason: text)
            }
            return .failed(reason: "the TLS handshake failed")
        }
        let version = unsafe SSL_get_version(ssl).map { unsafe String(cString: $0) } ?? "unknown"
        _ = unsafe SSL_shutdown(ssl)
        return .connected(version: version)
    }
}
