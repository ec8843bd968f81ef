/// A Byzantine spot check (`docs/PROTOCOL.md` section 3.6), `application/aether-challenge+json`:
/// `{"indices":[3,17,250],"nonce":"<32 bytes base64>"}`.
public struct NativeChallengeRequest: Sendable, Hashable {
    /// The chunk indices asked for (1 ... 64, distinct, each in `0 ..< AetherWire.maximumChunks`).
    public var indices: [Int]
    /// 32 random bytes the answer repeats.
    public var nonce: [UInt8]

    /// A request; `validate()` checks it.
    public init(indices: [Int], nonce: [UInt8]) {
        self.indices = indices
        self.nonce = nonce
    }

    /// Checks the counts and ranges.
    public func validate() throws(AetherProtocolError) {
        guard (1...AetherWire.maximumChallengeIndices).contains(indices.count) else {
            throw AetherProtocolError(.outOfRange, member: "indices", "a challenge names 1...64 indices")
        }
        guard indices.allSatisfy({ (0..<AetherWire.maximumChunks).contains($0) }) else {
            throw AetherProtocolError(.outOfRange, member: "indices", "an index is outside 0..<1048576")
        }
        guard Set(indices).count == indices.count else {
            throw AetherProtocolError(.inconsistent, member: "indices", "an index is repeated")
        }
        guard nonce.count == 32 else {
            throw AetherProtocolError(.outOfRange, member: "nonce", "the nonce is not 32 bytes")
        }
    }

    /// Parses and checks a body.
    public init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        let reader = try JSONObjectReader(
            JSONValue.parse(bytes, limit: AetherWire.maximumDocumentBytes), allowed: ["indices", "nonce"])
        guard case .array(let values) = try reader.required("indices") else {
            throw reader.wrongType("indices", "an array")
        }
        guard values.count <= AetherWire.maximumChallengeIndices else {
            throw AetherProtocolError(.outOfRange, member: "indices", "a challenge names 1...64 indices")
        }
        var indices: [Int] = []
        for value in values {
            indices.append(
                Int(try JSONObjectReader.integer(value, 0...Int64(AetherWire.maximumChunks - 1), name: "indices")))
        }
        self.indices = indices
        nonce = try reader.base64("nonce", maximumBytes: 32)
        try validate()
    }

    /// The canonical body.
    public var jsonBytes: [UInt8] {
        JSONValue.object([
            "indices": .array(indices.map { .integer($0) }), "nonce": JSONObjectReader.base64Value(nonce),
        ]).canonicalBytes
    }
}
