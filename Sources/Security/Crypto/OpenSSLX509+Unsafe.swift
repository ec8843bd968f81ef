internal import CAetherOpenSSL

/// X.509: certificates from DER and PEM, and their SubjectPublicKeyInfo.
/// Part of the `OpenSSL` namespace (see `OpenSSL+Unsafe.swift`); each function names the C functions it calls.
extension OpenSSL {
    /// X509_get_X509_PUBKEY + i2d_X509_PUBKEY: a certificate's SubjectPublicKeyInfo DER.
    static func subjectPublicKeyInfoDER(certificate: OpaquePointer) -> [UInt8]? {
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
}
