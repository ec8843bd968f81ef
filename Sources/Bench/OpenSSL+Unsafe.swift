internal import CAetherOpenSSL

/// Every raw OpenSSL baseline of aether-bench: SHA-256 calls with no Aether code in between.
enum OpenSSLBaseline {
    /// SHA256 (OpenSSL one-shot): the baseline every SHA-256 rate is compared with.
    static func opensslSHA256(_ bytes: UnsafeRawBufferPointer) -> UInt8 {
        var out = [UInt8](repeating: 0, count: 32)
        unsafe out.withUnsafeMutableBufferPointer { digest in
            _ = unsafe SHA256(
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, digest.baseAddress)
        }
        return out[0]
    }

    /// Calls OpenSSL's one-shot `SHA256()` `count` times on a `length`-byte stack buffer (at most
    /// 128). Each message carries the call number and the previous digest, like a Merkle leaf or
    /// node does, so no call can be skipped or hoisted. Returns a byte of the last digest.
    static func sha256Calls(count: Int, length: Int) -> UInt8 {
        precondition(length >= 37 && length <= 128, "baseline message length out of range")
        return unsafe withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { message in
            unsafe message.initialize(repeating: 0x5A)
            return unsafe withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { digest in
                unsafe digest.initialize(repeating: 0)
                guard let input = message.baseAddress, let output = digest.baseAddress else { return 0 }
                for call in 0..<count {
                    unsafe UnsafeMutableRawPointer(input).storeBytes(
                        of: UInt32(truncatingIfNeeded: call).littleEndian, toByteOffset: 1, as: UInt32.self)
                    unsafe UnsafeMutableRawPointer(input + 5).copyMemory(from: output, byteCount: 32)
                    // SHA256 (OpenSSL one-shot)
                    _ = unsafe SHA256(input, length, output)
                }
                return unsafe output[0]
            }
        }
    }

    /// The same loop through OpenSSL's low-level API, the fastest way OpenSSL offers for short
    /// messages (one-shot `SHA256()` fetches the algorithm on every call in OpenSSL 3).
    static func sha256LowLevelCalls(count: Int, length: Int) -> UInt8 {
        precondition(length >= 37 && length <= 128, "baseline message length out of range")
        return unsafe withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { message in
            unsafe message.initialize(repeating: 0x5A)
            return unsafe withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { digest in
                unsafe digest.initialize(repeating: 0)
                guard let input = message.baseAddress, let output = digest.baseAddress else { return 0 }
                var context = SHA256_CTX()
                for call in 0..<count {
                    unsafe UnsafeMutableRawPointer(input).storeBytes(
                        of: UInt32(truncatingIfNeeded: call).littleEndian, toByteOffset: 1, as: UInt32.self)
                    unsafe UnsafeMutableRawPointer(input + 5).copyMemory(from: output, byteCount: 32)
                    // SHA256_Init, SHA256_Update, SHA256_Final
                    _ = unsafe SHA256_Init(&context)
                    _ = unsafe SHA256_Update(&context, input, length)
                    _ = unsafe SHA256_Final(output, &context)
                }
                return unsafe output[0]
            }
        }
    }

    /// One SHA-256 pass over a file held in memory as chunks (SHA256_Init, SHA256_Update per chunk,
    /// SHA256_Final): the compute of one verification pass with no reading or copying. Returns the digest.
    static func sha256Pass(_ chunks: [[UInt8]]) -> [UInt8] {
        var context = SHA256_CTX()
        _ = unsafe SHA256_Init(&context)
        for chunk in chunks {
            _ = unsafe chunk.withUnsafeBytes { unsafe SHA256_Update(&context, $0.baseAddress, $0.count) }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        _ = unsafe digest.withUnsafeMutableBufferPointer { unsafe SHA256_Final($0.baseAddress, &context) }
        return digest
    }
}
