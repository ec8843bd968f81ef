package import AetherIntegrity

/// A Byzantine spot check of version 2 (`docs/PROTOCOL.md` section 3.6), `application/aether-challenge+json`:
/// `{"items":[{"index":3,"length":262144,"offset":0}],"nonce":"<32 bytes base64>","v":2}`.
///
/// A document without `"v"` is the old version 1 (`{"indices":[...],"nonce":...}`, answered with chunk hashes that a
/// server can keep without the bytes): it is refused with `.versionUnsupported`, never read as version 2.
package struct NativeChallengeRequest: Sendable, Hashable {
    /// The ranges asked (1 ... 64, distinct indices, each in `0 ..< AetherWire.maximumChunks`).
    package var items: [ByzantineChallenge.Item]
    /// 32 random bytes: the MAC key of every answer, repeated in the answer.
    package var nonce: [UInt8]

    /// A request; `validate()` checks it.
    package init(items: [ByzantineChallenge.Item], nonce: [UInt8]) {
        self.items = items
        self.nonce = nonce
    }

    /// The request that sends `challenge`.
    package init(_ challenge: ByzantineChallenge) {
        self.init(items: challenge.items, nonce: challenge.nonce)
    }

    /// The bytes the ranges add up to: what the receiver reads to answer.
    package var totalBytes: Int64 { items.reduce(0) { $0 + $1.length } }

    /// Checks the counts and ranges.
    package func validate() throws(AetherProtocolError) {
        guard (1...AetherWire.maximumChallengeIndices).contains(items.count) else {
            throw AetherProtocolError(.outOfRange, member: "items", "a challenge names 1...64 chunks")
        }
        guard items.allSatisfy({ (0..<AetherWire.maximumChunks).contains($0.index) }) else {
            throw AetherProtocolError(.outOfRange, member: "items.index", "an index is outside 0..<1048576")
        }
        guard items.allSatisfy({ $0.offset <= AetherWire.maximumInteger && $0.length <= AetherWire.maximumInteger })
        else {
            throw AetherProtocolError(.outOfRange, member: "items.length", "a range is outside 0...999999999999999")
        }
        guard Set(items.map(\.index)).count == items.count else {
            throw AetherProtocolError(.inconsistent, member: "items.index", "an index is repeated")
        }
        guard nonce.count == ByzantineChallenge.nonceByteCount else {
            throw AetherProtocolError(.outOfRange, member: "nonce", "the nonce is not 32 bytes")
        }
    }

    /// Parses and checks a body; a body of another version (none: version 1) is `.versionUnsupported`.
    package init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        let value = try JSONValue.parse(bytes, limit: AetherWire.maximumDocumentBytes)
        try Self.refuseOtherVersions(value, document: "challenge")
        let reader = try JSONObjectReader(value, allowed: ["items", "nonce", "v"])
        guard case .array(let values) = try reader.required("items") else {
            throw reader.wrongType("items", "an array")
        }
        guard values.count <= AetherWire.maximumChallengeIndices else {
            throw AetherProtocolError(.outOfRange, member: "items", "a challenge names 1...64 chunks")
        }
        var items: [ByzantineChallenge.Item] = []
        for value in values {
            let item = try JSONObjectReader(value, path: "items", allowed: ["index", "length", "offset"])
            items.append(try Self.item(item))
        }
        self.items = items
        nonce = try reader.base64("nonce", maximumBytes: ByzantineChallenge.nonceByteCount)
        try validate()
    }

    /// `index`, `offset` and `length` of a range object.
    static func item(_ reader: JSONObjectReader) throws(AetherProtocolError) -> ByzantineChallenge.Item {
        let index = try reader.int("index", 0...(AetherWire.maximumChunks - 1))
        let offset = try reader.integer("offset", 0...AetherWire.maximumInteger)
        let length = try reader.integer("length", 0...AetherWire.maximumInteger)
        do {
            return try ByzantineChallenge.Item(index: index, offset: offset, length: length)
        } catch {
            throw AetherProtocolError(.outOfRange, member: reader.name("length"), "the range is out of bounds")
        }
    }

    /// Refuses a challenge or answer document whose `v` is not `AetherWire.spotCheckVersion` (absent: version 1),
    /// before any other member is read, so an old document is never misread as a new one.
    static func refuseOtherVersions(_ value: JSONValue, document: String) throws(AetherProtocolError) {
        guard case .object(let members) = value else {
            throw AetherProtocolError(.wrongType, "the \(document) document is not an object")
        }
        guard let version = members["v"], version != .null else {
            throw AetherProtocolError(
                .versionUnsupported, member: "v",
                "a spot-check \(document) of version 1 (no \"v\"; chunk hashes, which prove nothing about the bytes)"
                    + " is refused: version \(AetherWire.spotCheckVersion) is spoken")
        }
        let number = try JSONObjectReader.integer(version, 0...AetherWire.maximumInteger, name: "v")
        guard number == Int64(AetherWire.spotCheckVersion) else {
            throw AetherProtocolError(
                .versionUnsupported, member: "v",
                "a spot-check \(document) of another version than \(AetherWire.spotCheckVersion) is refused")
        }
    }

    /// The canonical body.
    package var jsonBytes: [UInt8] {
        JSONValue.object([
            "items": .array(
                items.map {
                    .object(["index": .integer($0.index), "length": .integer($0.length), "offset": .integer($0.offset)])
                }),
            "nonce": JSONObjectReader.base64Value(nonce), "v": .integer(AetherWire.spotCheckVersion),
        ]).canonicalBytes
    }
}
