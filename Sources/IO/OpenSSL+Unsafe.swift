internal import CAetherOpenSSL

/// Every call into OpenSSL's libcrypto made by AetherIO. Nothing else in this module imports it.
///
/// SHA-256 uses the low-level `SHA256_CTX` (a plain C struct, so `SHA256` is a true value type with
/// no allocation); OpenSSL 3 routes it to the same SHA-NI assembly as EVP without EVP's per-call
/// dispatch, which matters for the 37- and 65-byte Merkle messages.
enum OpenSSL {
    typealias SHA256Context = SHA256_CTX

    /// SHA256_Init
    static func sha256Init() -> SHA256Context {
        var context = SHA256Context()
        _ = unsafe SHA256_Init(&context)
        return context
    }

    /// SHA256_Update
    static func sha256Update(_ context: inout SHA256Context, _ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, unsafe !bytes.isEmpty else { return }
        _ = unsafe SHA256_Update(&context, base, bytes.count)
    }

    /// SHA256_Final on a copy, so the running context stays usable. The copy is not wiped: SHA-256 state
    /// is never secret here (keyed hashing goes through `HMACContext`, whose context OpenSSL cleanses).
    static func sha256Final(_ context: SHA256Context) -> Digest32 {
        var copy = context
        var digest = Digest32.zero
        unsafe digest.withUnsafeMutableBytes { out in
            _ = unsafe SHA256_Final(out.baseAddress!.assumingMemoryBound(to: UInt8.self), &copy)
        }
        return digest
    }

    /// SHA256_Init + SHA256_Update + SHA256_Final: the one-shot `SHA256()` looks the algorithm up on
    /// every call in OpenSSL 3, which costs more than hashing a short message.
    static func sha256(_ bytes: UnsafeRawBufferPointer) -> Digest32 {
        var context = sha256Init()
        unsafe sha256Update(&context, bytes)
        return sha256Final(context)
    }

    typealias MD5Context = MD5_CTX

    /// MD5_Init
    static func md5Init() -> MD5Context {
        var context = MD5Context()
        _ = unsafe MD5_Init(&context)
        return context
    }

    /// MD5_Update
    static func md5Update(_ context: inout MD5Context, _ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, unsafe !bytes.isEmpty else { return }
        _ = unsafe MD5_Update(&context, base, bytes.count)
    }

    /// MD5_Final on a copy, so the running context stays usable.
    static func md5Final(_ context: MD5Context) -> [UInt8] {
        var copy = context
        var digest = [UInt8](repeating: 0, count: 16)
        unsafe digest.withUnsafeMutableBufferPointer { out in
            _ = unsafe MD5_Final(out.baseAddress!, &copy)
        }
        return digest
    }

    typealias SHA1Context = SHA_CTX

    /// SHA1_Init
    static func sha1Init() -> SHA1Context {
        var context = SHA1Context()
        _ = unsafe SHA1_Init(&context)
        return context
    }

    /// SHA1_Update
    static func sha1Update(_ context: inout SHA1Context, _ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, unsafe !bytes.isEmpty else { return }
        _ = unsafe SHA1_Update(&context, base, bytes.count)
    }

    /// SHA1_Final on a copy, so the running context stays usable.
    static func sha1Final(_ context: SHA1Context) -> [UInt8] {
        var copy = context
        var digest = [UInt8](repeating: 0, count: 20)
        unsafe digest.withUnsafeMutableBufferPointer { out in
            _ = unsafe SHA1_Final(out.baseAddress!, &copy)
        }
        return digest
    }

    /// EVP_MD_fetch, once: `EVP_sha256()` would make every HMAC_Init_ex fetch the digest implicitly.
    // nonisolated(unsafe): written once by the lazy initialiser; a fetched EVP_MD is immutable and
    // OpenSSL documents it as safe to share between threads.
    nonisolated(unsafe) private static let sha256Digest: OpaquePointer? = unsafe EVP_MD_fetch(nil, "SHA2-256", nil)

    /// An HMAC-SHA-256 context (HMAC_CTX) owned by one `HMACSHA256` value.
    @safe final class HMACContext {
        let pointer: OpaquePointer

        /// HMAC_CTX_new + HMAC_Init_ex
        init(key: UnsafeRawBufferPointer) throws(IOError) {
            guard let pointer = unsafe HMAC_CTX_new() else {
                throw IOError(.cryptoFailure, "HMAC_CTX_new failed")
            }
            unsafe self.pointer = pointer
            // HMAC_Init_ex accepts a NULL key pointer only with a zero length; use a 1-byte dummy instead.
            var empty: UInt8 = 0
            let ok = unsafe withUnsafeMutablePointer(to: &empty) { dummy in
                unsafe HMAC_Init_ex(
                    pointer, key.baseAddress ?? UnsafeRawPointer(dummy), Int32(key.count),
                    OpenSSL.sha256Digest ?? EVP_sha256(), nil)
            }
            guard ok == 1 else { throw IOError(.cryptoFailure, "HMAC_Init_ex failed") }
        }

        /// HMAC_CTX_copy
        init(copying other: HMACContext) throws(IOError) {
            guard let pointer = unsafe HMAC_CTX_new() else {
                throw IOError(.cryptoFailure, "HMAC_CTX_new failed")
            }
            unsafe self.pointer = pointer
            guard unsafe HMAC_CTX_copy(pointer, other.pointer) == 1 else {
                throw IOError(.cryptoFailure, "HMAC_CTX_copy failed")
            }
        }

        /// HMAC_Update
        func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, unsafe !bytes.isEmpty else { return }
            _ = unsafe HMAC_Update(pointer, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        }

        /// HMAC_Final (on a copy: the context stays usable).
        func finalize() throws(IOError) -> Digest32 {
            let copy = try HMACContext(copying: self)
            var digest = Digest32.zero
            var length: UInt32 = 32
            let ok = unsafe digest.withUnsafeMutableBytes { out in
                unsafe HMAC_Final(copy.pointer, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length)
            }
            guard ok == 1, length == 32 else { throw IOError(.cryptoFailure, "HMAC_Final failed") }
            return digest
        }

        /// HMAC_Final on this context, which must not be used afterwards.
        func finalizeInPlace() throws(IOError) -> Digest32 {
            var digest = Digest32.zero
            var length: UInt32 = 32
            let ok = unsafe digest.withUnsafeMutableBytes { out in
                unsafe HMAC_Final(pointer, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length)
            }
            guard ok == 1, length == 32 else { throw IOError(.cryptoFailure, "HMAC_Final failed") }
            return digest
        }

        /// HMAC_CTX_free (which cleanses the key schedule)
        deinit { unsafe HMAC_CTX_free(pointer) }
    }
}
