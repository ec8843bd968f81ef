package import AetherIO
package import AetherIntegrity

/// The receiver's answer to a spot check of version 2 (`docs/PROTOCOL.md` section 3.6):
/// `{"answers":[{"index":3,"length":262144,"mac":"<hex>"|null,"offset":0,"proof":{...}|null,"sha256":"<hex>"|null}],
/// "nonce":"<same>","v":2}`. An answer without `"v"` (version 1: hashes only) is refused with `.versionUnsupported`.
package struct NativeChallengeAnswer: Sendable, Hashable {
    /// One range's answer.
    package struct Answer: Sendable, Hashable {
        /// The range asked (echoed).
        package var item: ByzantineChallenge.Item
        /// `ByzantineChallenge.response(for:bytes:)` over the stored bytes of the range; nil when the chunk is not
        /// stored. The only member that proves the receiver holds the bytes.
        package var mac: Digest32?
        /// The chunk's SHA-256 as the receiver recorded it (a claim: it can be kept without the bytes); nil when
        /// none is recorded.
        package var sha256: Digest32?
        /// The chunk's inclusion proof in the Merkle tree over the recorded chunk hashes (a claim as well); nil until
        /// every chunk is stored.
        package var proof: MerkleProof?

        /// An answer.
        package init(item: ByzantineChallenge.Item, mac: Digest32?, sha256: Digest32?, proof: MerkleProof?) {
            self.item = item
            self.mac = mac
            self.sha256 = sha256
            self.proof = proof
        }
    }

    /// One answer per range asked, in the order asked.
    package var answers: [Answer]
    /// The request's nonce.
    package var nonce: [UInt8]

    /// An answer document.
    package init(answers: [Answer], nonce: [UInt8]) {
        self.answers = answers
        self.nonce = nonce
    }

    /// Parses and checks a body: `"v":2` first, at most 64 answers, the proof's `leafIndex` equal to the answer's
    /// index, a proof of a possible shape (`MerkleProof`'s own check), no proof without a hash and no hash without
    /// a MAC (a recorded hash of bytes the receiver cannot read back).
    package init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        let value = try JSONValue.parse(bytes, limit: AetherWire.maximumDocumentBytes)
        try NativeChallengeRequest.refuseOtherVersions(value, document: "answer")
        let reader = try JSONObjectReader(value, allowed: ["answers", "nonce", "v"])
        guard case .array(let values) = try reader.required("answers") else {
            throw reader.wrongType("answers", "an array")
        }
        guard values.count <= AetherWire.maximumChallengeIndices else {
            throw AetherProtocolError(.outOfRange, member: "answers", "more than 64 answers")
        }
        var answers: [Answer] = []
        for value in values {
            let entry = try JSONObjectReader(
                value, path: "answers", allowed: ["index", "length", "mac", "offset", "proof", "sha256"])
            let item = try NativeChallengeRequest.item(entry)
            let mac = try entry.optional("mac").map { (value) throws(AetherProtocolError) in
                try JSONObjectReader.digest(value, name: "answers.mac")
            }
            let sha256 = try entry.optional("sha256").map { (value) throws(AetherProtocolError) in
                try JSONObjectReader.digest(value, name: "answers.sha256")
            }
            guard sha256 == nil || mac != nil else {
                throw AetherProtocolError(.inconsistent, member: "answers.sha256", "a hash without a MAC")
            }
            var proof: MerkleProof?
            if let value = entry.optional("proof") {
                proof = try Self.proof(value, index: item.index)
                guard sha256 != nil else {
                    throw AetherProtocolError(.inconsistent, member: "answers.proof", "a proof without a hash")
                }
            }
            answers.append(Answer(item: item, mac: mac, sha256: sha256, proof: proof))
        }
        self.answers = answers
        nonce = try reader.base64("nonce", maximumBytes: ByzantineChallenge.nonceByteCount)
        guard nonce.count == ByzantineChallenge.nonceByteCount else {
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
    package var jsonBytes: [UInt8] {
        let values: [JSONValue] = answers.map { answer in
            var proof = JSONValue.null
            if let value = answer.proof {
                proof = .object([
                    "leafCount": .integer(value.leafCount), "leafIndex": .integer(value.leafIndex),
                    "siblings": .array(value.siblings.map { .string($0.hex) }),
                ])
            }
            return .object([
                "index": .integer(answer.item.index), "length": .integer(answer.item.length),
                "mac": answer.mac.map { .string($0.hex) } ?? .null, "offset": .integer(answer.item.offset),
                "proof": proof, "sha256": answer.sha256.map { .string($0.hex) } ?? .null,
            ])
        }
        return JSONValue.object([
            "answers": .array(values), "nonce": JSONObjectReader.base64Value(nonce),
            "v": .integer(AetherWire.spotCheckVersion),
        ]).canonicalBytes
    }
}
