import AetherIO

/// Noise's HKDF (revision 34, section 4.3) over HMAC-SHA-256, keyed with `SecureBytes`.
///
/// Every output lands in fresh `SecureBytes`; the intermediate digests are wiped before returning.
enum NoiseHKDF {
    /// `HKDF(chainingKey, inputKeyMaterial, 2)`.
    static func derive2(
        chainingKey: SecureBytes, inputKeyMaterial: UnsafeRawBufferPointer
    ) throws(SecurityError) -> (SecureBytes, SecureBytes) {
        let tempKey = try unsafe extract(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial)
        var first = try expand(tempKey, previous: nil, index: 1)
        var second = try expand(tempKey, previous: first, index: 2)
        let result = (secure(&first), secure(&second))
        return result
    }

    /// `HKDF(chainingKey, inputKeyMaterial, 3)`.
    static func derive3(
        chainingKey: SecureBytes, inputKeyMaterial: UnsafeRawBufferPointer
    ) throws(SecurityError) -> (SecureBytes, SecureBytes, SecureBytes) {
        let tempKey = try unsafe extract(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial)
        var first = try expand(tempKey, previous: nil, index: 1)
        var second = try expand(tempKey, previous: first, index: 2)
        var third = try expand(tempKey, previous: second, index: 3)
        let result = (secure(&first), secure(&second), secure(&third))
        return result
    }

    /// `temp_key = HMAC-HASH(chaining_key, input_key_material)`.
    private static func extract(
        chainingKey: SecureBytes, inputKeyMaterial: UnsafeRawBufferPointer
    ) throws(SecurityError) -> SecureBytes {
        var digest: Digest32
        do {
            digest = try unsafe HMACSHA256.authenticate(inputKeyMaterial, key: chainingKey)
        } catch {
            throw SecurityError(.systemCall, "HMAC-SHA-256 failed in the Noise HKDF")
        }
        return secure(&digest)
    }

    /// `output_i = HMAC-HASH(temp_key, output_{i-1} || byte(i))`.
    private static func expand(_ tempKey: SecureBytes, previous: Digest32?, index: UInt8) throws(SecurityError)
        -> Digest32
    {
        // The message (previous output, then the index byte) is built on the stack and wiped after use.
        let result: Result<Digest32, IOError> = unsafe withUnsafeTemporaryAllocation(byteCount: 33, alignment: 8) {
            message in
            var length = 0
            if let previous {
                unsafe previous.withUnsafeBytes {
                    unsafe message.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 32)
                }
                length = 32
            }
            unsafe message[length] = index
            length += 1
            defer { unsafe Sodium.wipe(message) }
            do throws(IOError) {
                return .success(
                    try unsafe HMACSHA256.authenticate(
                        UnsafeRawBufferPointer(rebasing: message[0..<length]), key: tempKey))
            } catch {
                return .failure(error)
            }
        }
        guard case .success(let digest) = result else {
            throw SecurityError(.systemCall, "HMAC-SHA-256 failed in the Noise HKDF")
        }
        return digest
    }

    /// Moves a digest into secret storage and wipes the digest.
    static func secure(_ digest: inout Digest32) -> SecureBytes {
        let stored = unsafe digest.withUnsafeMutableBytes { raw in
            let copy = unsafe SecureBytes(copying: UnsafeRawBufferPointer(raw))
            unsafe Sodium.wipe(raw)
            return copy
        }
        return stored
    }
}
