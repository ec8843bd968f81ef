internal import CAetherOpenSSL

/// HKDF-SHA-256 (RFC 5869) over libcrypto's EVP_KDF.
/// Part of the `OpenSSL` namespace (see `OpenSSL+Unsafe.swift`); each function names the C functions it calls.
extension OpenSSL {
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
}
