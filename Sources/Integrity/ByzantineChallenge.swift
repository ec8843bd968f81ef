public import AetherIO

/// A spot check of version 2 (`docs/PROTOCOL.md` 3.6): a fresh random nonce and byte ranges of sampled chunks of
/// one upload; the server answers, for each range,
/// `HMAC-SHA-256(key: nonce, message: tag || u8 len(id) || id || be64 index || be64 offset || be64 length || bytes)`
/// over the bytes it stores there, with the tag `DomainTag.byzantineChallenge`.
///
/// The nonce is fresh per challenge and the MAC is keyed by it, so no answer can be computed before the challenge
/// arrives or replayed from another one; the upload id, index and range are in the message, so an answer made for
/// one range, chunk or upload is no answer for another. Only a party holding the range's bytes when the challenge
/// arrives can answer: a SHA-256 of the chunk, kept instead of the bytes, does not help. The client computes the
/// expected answer from bytes it reads from its own file.
public struct ByzantineChallenge: Sendable, Hashable {
    /// Nonce length in bytes.
    public static let nonceByteCount = 32
    /// The spot-check version these answers implement (`"v":2` on the wire).
    public static let version = 2

    /// One checked range: `length` bytes from `offset` within chunk `index`.
    public struct Item: Sendable, Hashable {
        /// The chunk index.
        public let index: Int
        /// The first byte checked, counted from the chunk's start.
        public let offset: Int64
        /// How many bytes are checked.
        public let length: Int64

        /// A range; negative values are `.invalidArgument`.
        public init(index: Int, offset: Int64, length: Int64) throws(IntegrityError) {
            guard index >= 0, offset >= 0, length >= 0, offset <= Int64.max - length else {
                throw IntegrityError(.invalidArgument, "a spot-check range needs an index, offset and length >= 0")
            }
            self.index = index
            self.offset = offset
            self.length = length
        }
    }

    /// The receiver's id of the upload (its bytes as the receiver names it), bound into every answer.
    public let uploadID: [UInt8]
    /// The ranges asked, in order; chunk indices are distinct.
    public let items: [Item]
    /// The fresh nonce (not a long-term secret: it is disclosed to the server with the challenge).
    public let nonce: [UInt8]

    /// A challenge with a given nonce (parsed by a receiver, or in tests): an upload id of 1...255 bytes, at least
    /// one item, distinct indices and a 32-byte nonce, else `.invalidArgument`.
    public init(uploadID: [UInt8], items: [Item], nonce: [UInt8]) throws(IntegrityError) {
        guard (1...255).contains(uploadID.count) else {
            throw IntegrityError(.invalidArgument, "a spot check names an upload id of 1...255 bytes")
        }
        guard !items.isEmpty, Set(items.map(\.index)).count == items.count else {
            throw IntegrityError(.invalidArgument, "a spot check names at least one chunk, each once")
        }
        guard nonce.count == Self.nonceByteCount else {
            throw IntegrityError(.invalidArgument, "a spot check needs a 32-byte nonce")
        }
        self.uploadID = uploadID
        self.items = items
        self.nonce = nonce
    }

    /// A challenge with a nonce from the system CSPRNG.
    public static func fresh(uploadID: [UInt8], items: [Item]) throws(IntegrityError) -> ByzantineChallenge {
        try ByzantineChallenge(uploadID: uploadID, items: items, nonce: SecureRandom.bytes(nonceByteCount))
    }

    /// The answer for `item` over `bytes`, the item's range as stored (exactly `item.length` bytes, else
    /// `.invalidArgument`).
    public func response(for item: Item, bytes: UnsafeRawBufferPointer) throws(IntegrityError) -> Digest32 {
        guard Int64(bytes.count) == item.length else {
            throw IntegrityError(.invalidArgument, "the bytes of chunk \(item.index) are not the range's length")
        }
        return try authenticate(item) { (mac) throws(IOError) in try unsafe mac.update(bytes) }
    }

    /// The answer for `item` over `bytes`.
    public func response(for item: Item, bytes: [UInt8]) throws(IntegrityError) -> Digest32 {
        guard Int64(bytes.count) == item.length else {
            throw IntegrityError(.invalidArgument, "the bytes of chunk \(item.index) are not the range's length")
        }
        return try authenticate(item) { (mac) throws(IOError) in try mac.update(bytes) }
    }

    /// The bytes before the range's: tag, upload id, index, offset and length, each length-prefixed or fixed-size.
    func header(_ item: Item) -> [UInt8] {
        let tag = DomainTag.byzantineChallenge.bytes
        var message = [UInt8(tag.count)] + tag + [UInt8(uploadID.count)] + uploadID
        for value in [UInt64(item.index), UInt64(item.offset), UInt64(item.length)] {
            message += (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
        }
        return message
    }

    private func authenticate(_ item: Item, _ feed: (inout HMACSHA256) throws(IOError) -> Void)
        throws(IntegrityError) -> Digest32
    {
        do throws(IOError) {
            var mac = try HMACSHA256(key: SecureBytes(copying: nonce))
            try mac.update(header(item))
            try feed(&mac)
            return try mac.finalize()
        } catch {
            throw IntegrityError(.invalidArgument, "HMAC-SHA-256 failed: \(error.message)")
        }
    }
}
