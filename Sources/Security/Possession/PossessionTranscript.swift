import AetherIO

/// The computations both sides of proof of possession share: the session keys from the ephemeral X25519
/// exchange, and the HMAC-SHA-256 answer to each question. Answers are keyed MACs over the content bytes,
/// never a raw SHA-256 that someone holding only the digest could produce.
enum PossessionTranscript {
    static let macLabel: [UInt8] = Array("aether-pop-v1 mac".utf8) + [0]
    static let encryptionLabel: [UInt8] = Array("aether-pop-v1 enc".utf8) + [0]
    static let fullLabel: [UInt8] = Array("aether-pop-v1 full".utf8) + [0]
    static let rangeLabel: [UInt8] = Array("aether-pop-v1 range".utf8) + [0]
    static let chunkLabel: [UInt8] = Array("aether-pop-v1 chunk".utf8) + [0]
    static let answersMagic: [UInt8] = Array("APR1".utf8)

    /// Largest read while streaming content into an HMAC.
    static let readSize = 1 << 20

    struct Keys {
        let mac: SymmetricKey
        let encryption: SymmetricKey
    }

    /// `HKDF-SHA-256(IKM = X25519 shared secret, salt = nonce, info = label || claim || verifier key || prover key)`,
    /// once with the MAC label and once with the encryption label.
    static func keys(
        shared: SharedSecret, nonce: UUIDv7, claim: PossessionClaim, verifierKey: X25519.PublicKey,
        proverKey: X25519.PublicKey
    ) throws(SecurityError) -> Keys {
        let context = claim.canonicalBytes + verifierKey.rawRepresentation + proverKey.rawRepresentation
        return Keys(
            mac: try HKDF.deriveKey(sharedSecret: shared, salt: nonce.bytes, info: macLabel + context),
            encryption: try HKDF.deriveKey(sharedSecret: shared, salt: nonce.bytes, info: encryptionLabel + context))
    }

    /// The byte range of chunk `index`.
    static func chunkRange(index: UInt32, claim: PossessionClaim) throws(SecurityError) -> (offset: UInt64, count: Int)
    {
        guard UInt64(index) < claim.chunkCount else {
            throw SecurityError(.malformedMessage, "chunk \(index) is outside \(claim.chunkCount) chunks")
        }
        let offset = UInt64(index) * UInt64(claim.chunkSize)
        guard offset < claim.contentSize || claim.contentSize == 0 else {
            throw SecurityError(.malformedMessage, "chunk \(index) starts past the end")
        }
        return (offset, Int(min(UInt64(claim.chunkSize), claim.contentSize - offset)))
    }

    /// The HMAC answering `item`, computed from `source`.
    static func answer(
        _ item: PossessionChallenge.Item, nonce: UUIDv7, key: SymmetricKey, source: any PossessionSource,
        claim: PossessionClaim
    ) throws(SecurityError) -> Digest32 {
        var header: [UInt8]
        let offset: UInt64
        let count: UInt64
        switch item {
        case .fullHash:
            header = fullLabel + nonce.bytes
            PossessionWireReader.append(claim.contentSize, byteCount: 8, to: &header)
            (offset, count) = (0, claim.contentSize)
        case .range(let start, let length):
            guard start <= claim.contentSize, UInt64(length) <= claim.contentSize - start, length > 0 else {
                throw SecurityError(.malformedMessage, "range \(start)+\(length) is outside the content")
            }
            header = rangeLabel + nonce.bytes
            PossessionWireReader.append(start, byteCount: 8, to: &header)
            PossessionWireReader.append(UInt64(length), byteCount: 4, to: &header)
            (offset, count) = (start, UInt64(length))
        case .merkleChunk(let index):
            let range = try chunkRange(index: index, claim: claim)
            header = chunkLabel + nonce.bytes
            PossessionWireReader.append(UInt64(index), byteCount: 4, to: &header)
            (offset, count) = (range.offset, UInt64(range.count))
        }
        guard source.size == claim.contentSize else {
            throw SecurityError(.malformedMessage, "the content size differs from the claim")
        }
        do {
            var mac = try HMACSHA256(key: key.secret)
            try mac.update(header)
            var position = offset
            while position < offset + count {
                let piece = Int(min(UInt64(readSize), offset + count - position))
                try mac.update(try source.read(offset: position, count: piece))
                position += UInt64(piece)
            }
            return try mac.finalize()
        } catch let error as SecurityError {
            throw error
        } catch {
            throw SecurityError(.systemCall, "HMAC-SHA-256 failed")
        }
    }
}
