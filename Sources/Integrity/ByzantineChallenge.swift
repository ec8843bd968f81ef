public import AetherIO

/// A challenge that makes a server prove it holds a chunk right now: the client sends a fresh
/// random nonce and the chunk index; the server answers `HMAC-SHA-256(key: nonce, message: chunk bytes)`.
///
/// The nonce is fresh per challenge, so no answer can be precomputed or replayed; only a party
/// holding the chunk's bytes can answer. The client computes the expected answer from its own copy.
public struct ByzantineChallenge: Sendable, Hashable {
    /// Nonce length in bytes.
    public static let nonceByteCount = 32

    /// The challenged chunk.
    public let chunkIndex: Int
    /// The fresh nonce to send (not a long-term secret: it is disclosed to the server).
    public let nonce: [UInt8]

    /// Creates a challenge with a given nonce (received by a server, or in tests).
    public init(chunkIndex: Int, nonce: [UInt8]) throws(IntegrityError) {
        guard chunkIndex >= 0, nonce.count == Self.nonceByteCount else {
            throw IntegrityError(.invalidArgument, "a challenge needs a chunk index >= 0 and a 32-byte nonce")
        }
        self.chunkIndex = chunkIndex
        self.nonce = nonce
    }

    /// A challenge with a nonce from the system CSPRNG.
    public static func fresh(chunkIndex: Int) throws(IntegrityError) -> ByzantineChallenge {
        try ByzantineChallenge(chunkIndex: chunkIndex, nonce: SecureRandom.bytes(nonceByteCount))
    }

    /// The answer to this challenge over `chunk` (what an honest server sends, and what the client expects).
    public func response(chunk: UnsafeRawBufferPointer) throws(IntegrityError) -> Digest32 {
        try authenticate { (mac) throws(IOError) in try unsafe mac.update(chunk) }
    }

    /// The answer to this challenge over `chunk`.
    public func response(chunk: some Sequence<UInt8>) throws(IntegrityError) -> Digest32 {
        try authenticate { (mac) throws(IOError) in try mac.update(chunk) }
    }

    private func authenticate(_ feed: (inout HMACSHA256) throws(IOError) -> Void) throws(IntegrityError) -> Digest32 {
        do throws(IOError) {
            var mac = try HMACSHA256(key: SecureBytes(copying: nonce))
            try feed(&mac)
            return try mac.finalize()
        } catch {
            throw IntegrityError(.invalidArgument, "HMAC-SHA-256 failed: \(error.message)")
        }
    }
}
