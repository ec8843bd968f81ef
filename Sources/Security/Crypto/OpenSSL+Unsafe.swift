internal import CAetherOpenSSL

/// Every call into OpenSSL (libcrypto and libssl) made by AetherSecurity. Nothing else in this module
/// imports it. Each function names the C functions it calls; every failure returns `false`/`nil` after
/// clearing OpenSSL's thread-local error queue, and the typed errors are made by the callers.
///
/// One file per concern extends it: `OpenSSLHKDF+Unsafe.swift`, `OpenSSLAESGCM+Unsafe.swift`,
/// `OpenSSLRSA+Unsafe.swift` (RSA-PSS), `OpenSSLX509+Unsafe.swift` and `OpenSSLTLS+Unsafe.swift` (the pin check
/// as libssl's verification callback). This file holds what they share.
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
}
