public import AetherIO
public import AetherIntegrity

/// The receiver's answer to a spot check (`docs/PROTOCOL.md` section 3.6):
/// `{"answers":[{"index":3,"proof":{...}|null,"sha256":"<hex>"|null}],"nonce":"<same>"}`.
public struct NativeChallengeAnswer: Sendable, Hashable {
    /// One chunk's answer.
    public struct Answer: Sendable, Hashable {
        /// The chunk index.
        public var index: Int
        /// SHA-256 of the stored chunk, re-read; nil when the chunk is not stored.
        public var sha256: Digest32?
        /// The chunk's inclusion proof in the Merkle tree over the stored chunk hashes; nil until every chunk is
        /// stored.
        public var proof: MerkleProof?

        /// An answer.
        public init(index: Int, sha256: Digest32?, proof: MerkleProof?) {
            self.index = index
            self.sha256 = sha256
            self.proof = proof
        }
    }

    /// One answer per index asked, in the order asked.
    public var answers: [Answer]
    /// The request's nonce.
    public var nonce: [UInt8]

    /// An answer document.
    public init(answers: [Answer], nonce: [UInt8]) {
        self.answers = answers
        self.nonce = nonce
    }

    /// Parses and checks a body: at most 64 answers, the proof's `leafIndex` equal to the answer's index, a proof
    /// of a possible shape (`MerkleProof`'s own check), no proof without a hash.
    public init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        let reader = try JSONObjectReader(
            JSONValue.parse(bytes, limit: AetherWire.maximumDocumentBytes), allowed: ["answers", "nonce"])
        guard case .array(let values) = try reader.required("answers") else {
            throw reader.wrongType("answers", "an array")
        }
        guard values.count <= AetherWire.maximumChallengeIndices else {
            throw AetherProtocolError(.outOfRange, member: "answers", "more than 64 answers")
        }
        var answers: [Answer] = []
        for value in values {
            let item = try JSONObjectReader(value, path: "answers", allowed: ["index", "proof", "sha256"])
            let index = try item.int("index", 0...(AetherWire.maximumChunks - 1))
            let sha256 = try item.optional("sha256").map { (value) throws(AetherProtocolError) in
                try JSONObjectReader.digest(value, name: "answers.sha256")
            }
            var proof: MerkleProof?
            if let value = item.optional("proof") {
                proof = try Self.proof(value, index: index)
                guard sha256 != nil else {
                    throw AetherProtocolError(.inconsistent, member: "answers.proof", "a proof without a hash")
                }
            }
            answers.append(Answer(index: index, sha256: sha256, proof: proof))
        }
        self.answers = answers
        nonce = try reader.base64("nonce", maximumBytes: 32)
        guard nonce.count == 32 else {
            throw AetherProtocolError(.outOfRange, member: "nonce", "the nonce is not 32 bytes")
        }
    }

    private static func proof(_ value: JSONValue, index: Int) throws(AetherProtocolError) -> MerkleProof {
        let reader = try JSONObjectReader(
            value, path: "answers.proof", allowed: ["leafCount", "leafIndex", "siblings"])
        let leafCount = try reader.integer("leafCount", 1...Int64(AetherWire.maximumChunks))
        let leafIndex = try reader.integer("leafIndex", 0...Int64(AetherWire.maximumChunks - 1))
        guard leafIndex == Int64(index) else {
            throw AetherProtocolError(
                .inconsistent, member: "answers.proof.leafIndex", "the proof is for another index")
        }
        guard case .array(let values) = try reader.required("siblings") else {
            throw reader.wrongType("siblings", "an array")
        }
        guard values.count <= 64 else {
            throw AetherProtocolError(.outOfRange, member: "answers.proof.siblings", "more than 64 siblings")
        }
        var siblings: [Digest32] = []
        for sibling in values {
            siblings.append(try JSONObjectReader.digest(sibling, name: "answers.proof.siblings"))
        }
        do {
            return try MerkleProof(leafIndex: UInt64(leafIndex), leafCount: UInt64(leafCount), siblings: siblings)
        } catch {
            throw AetherProtocolError(
                .inconsistent, member: "answers.proof.siblings", "the proof's shape does not fit its leaf count")
        }
    }

    /// The canonical body.
    public var jsonBytes: [UInt8] {
        let values: [JSONValue] = answers.map { answer in
            var proof = JSONValue.null
            if let value = answer.proof {
                proof = .object([
                    "leafCount": .integer(value.leafCount), "leafIndex": .integer(value.leafIndex),
                    "siblings": .array(value.siblings.map { .string($0.hex) }),
                ])
            }
            return .object([
                "index": .integer(answer.index), "proof": proof,
                "sha256": answer.sha256.map { .string($0.hex) } ?? .null,
            ])
        }
        return JSONValue.object(["answers": .array(values), "nonce": JSONObjectReader.base64Value(nonce)])
            .canonicalBytes
    }
}
