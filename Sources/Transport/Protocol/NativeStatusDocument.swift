package import AetherIO

/// The status document (`docs/PROTOCOL.md` section 3.5), `application/aether-status+json`: the answer to create
/// and to `GET /uploads/{id}`, and the body of a `409 incomplete`.
package struct NativeStatusDocument: Sendable, Hashable {
    /// An upload's state.
    package enum State: String, Sendable, Hashable, CaseIterable {
        case open, complete, failed, expired
    }

    /// The parity part: the scheme and which shards are stored (`group * parity + shard`).
    package struct Parity: Sendable, Hashable {
        /// The scheme.
        package var scheme: ParityScheme
        /// Stored shards, `groups * scheme.parity` bits.
        package var received: ChunkBitmap

        /// A parity status.
        package init(scheme: ParityScheme, received: ChunkBitmap) {
            self.scheme = scheme
            self.received = received
        }
    }

    /// The received prefix of a chunk whose request was cut (section 3.2.2): a continuation from `received` goes on.
    package struct Partial: Sendable, Hashable {
        /// The chunk.
        package var index: Int
        /// Bytes of it the receiver holds, from its first (1 ... its length - 1).
        package var received: Int64

        /// A partial.
        package init(index: Int, received: Int64) {
            self.index = index
            self.received = received
        }
    }

    /// The upload id (26 characters of lowercase base32).
    package var id: String
    /// The object size.
    package var size: Int64
    /// The chunk size.
    package var chunkSize: Int64
    /// The chunk count.
    package var chunks: Int
    /// Stored chunks, `chunks` bits.
    package var received: ChunkBitmap
    /// The last index whose link the receiver checked, or -1.
    package var chainVerifiedThrough: Int
    /// The commitment-chain link of chunk `chainVerifiedThrough` (`"chainLink":"<hex>"`): the head of the chain over
    /// the checked prefix, which a resuming client compares with its own (resume level 3). nil before any chunk was
    /// checked, and from a receiver that does not report it.
    package var chainLink: Digest32?
    /// When the upload expires if left idle, seconds since 1970 (sent as RFC 3339 UTC).
    package var expires: Int64
    /// The parity status, when the upload has parity.
    package var parity: Parity?
    /// The serialized `PossessionChallenge` when the receiver holds the object (section 3.7).
    package var possessionChallenge: [UInt8]?
    /// The state.
    package var state: State
    /// True while the upload's size is unknown (created with `"size":null`): `size` is then 0 and `chunks` the
    /// extent of the bitmap (the highest stored index + 1); on the wire `"size":null`.
    package var sizeDeferred = false
    /// The received prefixes of cut chunks, by index (`"partials":[[index, received], ...]`), when the request asked
    /// for them (`Aether-Partials: ?1`, section 3.5); nil: the member is absent.
    package var partials: [Partial]?

    /// The longest possession challenge accepted.
    package static let maximumChallengeBytes = 16 << 10

    /// A status document.
    package init(
        id: String, size: Int64, chunkSize: Int64, chunks: Int, received: ChunkBitmap, chainVerifiedThrough: Int,
        expires: Int64, parity: Parity? = nil, possessionChallenge: [UInt8]? = nil, state: State
    ) {
        self.id = id
        self.size = size
        self.chunkSize = chunkSize
        self.chunks = chunks
        self.received = received
        self.chainVerifiedThrough = chainVerifiedThrough
        self.expires = expires
        self.parity = parity
        self.possessionChallenge = possessionChallenge
        self.state = state
    }

    /// Whether `id` has the form of an upload id: 26 characters of `a-z2-7`.
    package static func isUploadID(_ id: String) -> Bool {
        id.utf8.count == 26
            && id.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x32...0x37).contains($0) }
    }

    /// Parses and checks a body (at most `AetherWire.maximumStatusDocumentBytes`).
    package init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        let reader = try JSONObjectReader(
            JSONValue.parse(bytes, limit: AetherWire.maximumStatusDocumentBytes),
            allowed: [
                "chainLink", "chainVerifiedThrough", "chunkSize", "chunks", "expires", "id", "parity", "partials",
                "possession", "received", "size", "state",
            ])
        id = try reader.string("id", maximumBytes: 26)
        guard Self.isUploadID(id) else {
            throw AetherProtocolError(.malformed, member: "id", "id is not 26 characters of lowercase base32")
        }
        sizeDeferred = reader.members["size"] == .null
        size = try sizeDeferred ? 0 : reader.integer("size", 0...AetherWire.maximumInteger)
        chunkSize = try reader.integer("chunkSize", 1...AetherWire.maximumInteger)
        chunks = try reader.int("chunks", (sizeDeferred ? 0 : 1)...AetherWire.maximumChunks)
        guard sizeDeferred || chunks == NativeCreateRequest.chunkCount(size: size, chunkSize: chunkSize) else {
            throw AetherProtocolError(.inconsistent, member: "chunks", "chunks is not ceil(size / chunkSize)")
        }
        let bitmap = try reader.string("received", maximumBytes: (AetherWire.maximumChunks / 8 + 2) / 3 * 4)
        received = try ChunkBitmap(base64: bitmap, count: chunks, member: "received")
        chainVerifiedThrough = try reader.int("chainVerifiedThrough", -1...(chunks - 1))
        chainLink = try reader.optional("chainLink").map { (value) throws(AetherProtocolError) in
            try JSONObjectReader.digest(value, name: "chainLink")
        }
        guard chainLink == nil || chainVerifiedThrough >= 0 else {
            throw AetherProtocolError(
                .inconsistent, member: "chainLink", "chainLink is given though no chunk's link was checked")
        }
        let expiresText = try reader.string("expires", maximumBytes: 20)
        guard let expires = RFC3339Time.parse(expiresText) else {
            throw AetherProtocolError(.malformed, member: "expires", "expires is not an RFC 3339 UTC time")
        }
        self.expires = expires
        let stateText = try reader.string("state", maximumBytes: 16)
        guard let state = State(rawValue: stateText) else {
            throw AetherProtocolError(.outOfRange, member: "state", "state is not open, complete, failed or expired")
        }
        self.state = state
        if let value = reader.optional("parity") {
            guard !sizeDeferred else {
                throw AetherProtocolError(.inconsistent, member: "parity", "parity needs a known size")
            }
            let parityReader = try JSONObjectReader(
                value, path: "parity", allowed: ["code", "data", "parity", "received"])
            let scheme = try ParityScheme.read(parityReader)
            let shards = scheme.groups(chunks: chunks) * scheme.parity
            let text = try parityReader.string("received", maximumBytes: (shards / 8 + 2) / 3 * 4 + 4)
            parity = Parity(
                scheme: scheme, received: try ChunkBitmap(base64: text, count: shards, member: "parity.received"))
        } else {
            parity = nil
        }
        partials = try reader.optional("partials").map { (value) throws(AetherProtocolError) in
            try Self.partials(value, chunks: sizeDeferred ? AetherWire.maximumChunks : chunks, chunkSize: chunkSize)
        }
        if let value = reader.optional("possession") {
            let possessionReader = try JSONObjectReader(value, path: "possession", allowed: ["challenge"])
            possessionChallenge = try possessionReader.base64("challenge", maximumBytes: Self.maximumChallengeBytes)
        } else {
            possessionChallenge = nil
        }
    }

    /// `partials`: at most `AetherWire.maximumPartials` pairs `[index, received]` of integers, indices ascending and
    /// below `chunks`, each `received` in 1 ... `chunkSize - 1` (a prefix, never a whole chunk).
    private static func partials(_ value: JSONValue, chunks: Int, chunkSize: Int64) throws(AetherProtocolError)
        -> [Partial]
    {
        guard case .array(let items) = value else {
            throw AetherProtocolError(.wrongType, member: "partials", "partials is not an array")
        }
        guard items.count <= AetherWire.maximumPartials else {
            throw AetherProtocolError(
                .tooLarge, member: "partials", "partials lists more than \(AetherWire.maximumPartials) chunks")
        }
        var out: [Partial] = []
        for item in items {
            guard case .array(let pair) = item, pair.count == 2 else {
                throw AetherProtocolError(.wrongType, member: "partials", "a partial is not [index, received]")
            }
            let index = Int(try JSONObjectReader.integer(pair[0], 0...Int64(chunks - 1), name: "partials"))
            let received = try JSONObjectReader.integer(pair[1], 1...max(1, chunkSize - 1), name: "partials")
            guard received < chunkSize, out.last.map({ $0.index < index }) ?? true else {
                throw AetherProtocolError(
                    .inconsistent, member: "partials",
                    "partials are not in ascending chunk order, or hold a whole chunk")
            }
            out.append(Partial(index: index, received: received))
        }
        return out
    }

    /// The canonical body.
    package var jsonBytes: [UInt8] {
        var parityValue = JSONValue.null
        if let parity {
            var members = parity.scheme.jsonMembers
            members["received"] = .string(parity.received.base64)
            parityValue = .object(members)
        }
        var possessionValue = JSONValue.null
        if let possessionChallenge {
            possessionValue = .object(["challenge": JSONObjectReader.base64Value(possessionChallenge)])
        }
        var members: [String: JSONValue] = [
            "chainVerifiedThrough": .integer(chainVerifiedThrough), "chunkSize": .integer(chunkSize),
            "chunks": .integer(chunks), "expires": .string(RFC3339Time.format(expires)), "id": .string(id),
            "parity": parityValue, "possession": possessionValue, "received": .string(received.base64),
            "size": sizeDeferred ? .null : .integer(size), "state": .string(state.rawValue),
        ]
        if let chainLink { members["chainLink"] = .string(chainLink.hex) }
        if let partials {
            members["partials"] = .array(partials.map { .array([.integer($0.index), .integer($0.received)]) })
        }
        return JSONValue.object(members).canonicalBytes
    }
}
