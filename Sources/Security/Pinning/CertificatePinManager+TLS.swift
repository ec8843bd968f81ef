extension CertificatePinManager {
    /// libssl certificate verification with pins: runs OpenSSL's default chain validation (`X509_verify_cert`:
    /// signatures up to a trust anchor, validity dates, purpose, and the host name set on the connection), then
    /// checks the verified chain's SPKI pins. Returns the verdict; on a pin mismatch the store context's error is
    /// `X509_V_ERR_APPLICATION_VERIFICATION`. Synchronous (RACE-6).
    ///
    /// - Parameter storeContext: the `X509_STORE_CTX *` libssl hands to a certificate verification callback.
    public func verifyChain(storeContext: OpaquePointer) -> Bool {
        unsafe OpenSSL.verifyChain(storeContext: storeContext, manager: self)
    }

    /// Makes this manager the certificate verification of an `SSL_CTX` (for libcurl, from
    /// `CURLOPT_SSL_CTX_FUNCTION`): raises the minimum protocol version to TLS 1.2 if it is lower (never lowers
    /// it), keeps `SSL_VERIFY_PEER` on, and installs `verifyChain(storeContext:)` with
    /// `SSL_CTX_set_cert_verify_callback`. The context keeps the manager alive until it is freed.
    ///
    /// - Parameter sslContext: an `SSL_CTX *`.
    public func installPinning(onSSLContext sslContext: OpaquePointer) throws(SecurityError) {
        guard unsafe OpenSSL.installPinning(sslContext: sslContext, manager: self) else {
            throw SecurityError(.systemCall, "cannot install certificate pinning on the TLS context")
        }
    }
}
