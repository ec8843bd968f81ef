public import AetherIO
import AetherIntegrity

/// The prover side of proof of possession ("instant upload": the server already holds the content and asks
/// the client to prove it holds it too). It answers a `PossessionChallenge` from its own copy of the content.
public struct ProofOfPossessionProver: Sendable {
    private let source: any PossessionSource
    private let chunkHashes: [Digest32]
    private let proofs: MerkleProofBuilder
    /// The claim this prover makes about its content.
    public let claim: PossessionClaim

    /// A prover for `source` cut into `chunkSize`-byte chunks whose SHA-256s are `chunkHashes` (from the
    /// upload's manifest, or `ProofOfPossessionProver.chunkHashes(of:chunkSize:)`).
    public init(source: any PossessionSource, chunkSize: UInt32, chunkHashes: [Digest32]) throws(SecurityError) {
        guard chunkSize > 0 else { throw SecurityError(.malformedMessage, "the chunk size must be positive") }
        let expected = (source.size + UInt64(chunkSize) - 1) / UInt64(chunkSize)
        guard UInt64(chunkHashes.count) == expected else {
            throw SecurityError(.malformedMessage, "\(chunkHashes.count) chunk hashes for \(expected) chunks")
        }
        do {
            proofs = try MerkleProofBuilder(chunkHashes: chunkHashes)
        } catch {
            throw SecurityError(.limitExceeded, "too many chunks for a Merkle tree")
        }
        self.source = source
        self.chunkHashes = chunkHashes
        claim = PossessionClaim(
            contentSize: source.size, chunkSize: chunkSize, chunkCount: expected, merkleRoot: proofs.root)
    }

    /// The SHA-256 of every `chunkSize`-byte chunk of `source`.
    public static func chunkHashes(of source: any PossessionSource, chunkSize: UInt32) throws(SecurityError)
        -> [Digest32]
    {
        guard chunkSize > 0 else { throw SecurityError(.malformedMessage, "the chunk size must be positive") }
        var hashes: [Digest32] = []
        var offset: UInt64 = 0
        while offset < source.size {
            let count = Int(min(UInt64(chunkSize), source.size - offset))
            hashes.append(SHA256.hash(try source.read(offset: offset, count: count)))
            offset += UInt64(count)
        }
        return hashes
    }

    /// Answers `challenge`: a fresh ephemeral X25519 key, keys derived with the verifier's key, every answer an
    /// HMAC-SHA-256 over the content (plus the chunk's SHA-256 and inclusion proof for Merkle questions),
    /// sealed with AES-256-GCM.
    public func respond(to challenge: PossessionChallenge) throws(SecurityError) -> PossessionResponse {
        let ephemeral = try X25519.PrivateKey()
        let shared = try ephemeral.sharedSecret(with: challenge.verifierKey)
        let keys = try PossessionTranscript.keys(
            shared: shared, nonce: challenge.nonce, claim: claim, verifierKey: challenge.verifierKey,
            proverKey: ephemeral.publicKey)
        var answers = PossessionTranscript.answersMagic
        answers.append(UInt8(challenge.items.count))
        for item in challenge.items {
            if case .merkleChunk(let index) = item {
                _ = try PossessionTranscript.chunkRange(index: index, claim: claim)
                let proof: [UInt8]
                do {
                    proof = try proofs.proof(forLeaf: Int(index)).serialized()
                } catch {
                    throw SecurityError(.malformedMessage, "no inclusion proof for chunk \(index)")
                }
                answers += chunkHashes[Int(index)].bytes
                PossessionWireReader.append(UInt64(proof.count), byteCount: 2, to: &answers)
                answers += proof
            }
            let mac = try PossessionTranscript.answer(
                item, nonce: challenge.nonce, key: keys.mac, source: source, claim: claim)
            answers += mac.bytes
        }
        let aad = PossessionResponse.associatedData(
            nonce: challenge.nonce, proverKey: ephemeral.publicKey, verifierKey: challenge.verifierKey)
        let sealed = try AESGCM.sealCombined(answers, authenticating: aad, key: keys.encryption)
        return try PossessionResponse(nonce: challenge.nonce, proverKey: ephemeral.publicKey, sealedAnswers: sealed)
    }
}
