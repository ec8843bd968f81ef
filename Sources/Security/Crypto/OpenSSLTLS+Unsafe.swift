internal import AetherIO
internal import CAetherOpenSSL

/// TLS: the pin check as libssl's certificate verification callback, and the handshake probe.
/// Part of the `OpenSSL` namespace (see `OpenSSL+Unsafe.swift`); each function names the C functions it calls.
extension OpenSSL {
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
