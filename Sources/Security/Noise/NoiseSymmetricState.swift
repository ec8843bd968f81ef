import AetherIO

/// Noise's SymmetricState (section 5.2) for SHA-256: chaining key, handshake hash and a cipher state.
///
/// The chaining key lives in `SecureBytes` and every handshake key in a `SymmetricKey`; a value type, so
/// a caller can run a step on a copy and keep the original when the step fails.
struct NoiseSymmetricState: Sendable {
    private(set) var chainingKey: SecureBytes
    private(set) var handshakeHash: Digest32
    private(set) var cipher = NoiseCipherState()

    /// InitializeSymmetric(protocol_name) followed by MixHash(prologue).
    init(protocolName: [UInt8], prologue: [UInt8]) {
        if protocolName.count <= 32 {
            var padded = protocolName + [UInt8](repeating: 0, count: 32 - protocolName.count)
            handshakeHash = (try? Digest32(bytes: padded)) ?? .zero
            padded.removeAll()
        } else {
            handshakeHash = SHA256.hash(protocolName)
        }
        chainingKey = unsafe handshakeHash.withUnsafeBytes { unsafe SecureBytes(copying: $0) }
        mixHash(prologue)
    }

    /// MixHash(data): h = HASH(h || data).
    mutating func mixHash(_ data: [UInt8]) {
        var hasher = SHA256()
        hasher.update(handshakeHash)
        hasher.update(data)
        handshakeHash = hasher.finalize()
    }

    /// MixHash over raw bytes (no copy of them is made).
    mutating func mixHash(raw data: UnsafeRawBufferPointer) {
        var hasher = SHA256()
        hasher.update(handshakeHash)
        unsafe hasher.update(data)
        handshakeHash = hasher.finalize()
    }

    /// MixKey(input_key_material).
    mutating func mixKey(_ inputKeyMaterial: UnsafeRawBufferPointer) throws(SecurityError) {
        let (ck, k) = try unsafe NoiseHKDF.derive2(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial)
        chainingKey = ck
        cipher.initializeKey(try SymmetricKey(secureBytes: k))
    }

    /// MixKeyAndHash(input_key_material), used for the PSK token.
    mutating func mixKeyAndHash(_ inputKeyMaterial: UnsafeRawBufferPointer) throws(SecurityError) {
        let (ck, tempH, k) = try unsafe NoiseHKDF.derive3(
            chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial)
        chainingKey = ck
        unsafe tempH.withUnsafeBytes { unsafe mixHash(raw: $0) }
        cipher.initializeKey(try SymmetricKey(secureBytes: k))
    }

    /// EncryptAndHash(plaintext).
    mutating func encryptAndHash(_ plaintext: [UInt8]) throws(SecurityError) -> [UInt8] {
        let ciphertext = try cipher.encrypt(plaintext, associatedData: handshakeHash.bytes)
        mixHash(ciphertext)
        return ciphertext
    }

    /// DecryptAndHash(ciphertext). On failure nothing changes (the nonce included).
    mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(SecurityError) -> [UInt8] {
        let plaintext = try cipher.decrypt(ciphertext, associatedData: handshakeHash.bytes)
        mixHash(ciphertext)
        return plaintext
    }

    /// Split(): the initiator-to-responder and responder-to-initiator keys.
    func split() throws(SecurityError) -> NoiseTransportKeys {
        let empty: [UInt8] = []
        let (k1, k2) = try unsafe TypedBytes.with(empty) { (raw) throws(SecurityError) in
            try unsafe NoiseHKDF.derive2(chainingKey: chainingKey, inputKeyMaterial: raw)
        }
        return NoiseTransportKeys(
            initiatorToResponder: try SymmetricKey(secureBytes: k1),
            responderToInitiator: try SymmetricKey(secureBytes: k2), handshakeHash: handshakeHash)
    }
}
