public import AetherIO

/// The two hash functions of Aether's Merkle tree, with domain separation between leaves and nodes.
///
/// - Leaf `i`: `SHA-256(0x00 || i as 4 bytes little-endian || chunk SHA-256)` (37 bytes hashed).
/// - Internal node: `SHA-256(0x01 || level as 1 byte || left || right)` (66 bytes hashed), where a
///   node's level is one more than its left child's level and a leaf is level 0.
///
/// Both messages are assembled in a stack buffer and hashed through `SHA256` (OpenSSL's low-level
/// context, itself a stack value): no allocation per hash.
public enum MerkleHash {
    /// The hash of leaf `index` over a chunk's SHA-256.
    public static func leaf(index: UInt32, chunkHash: Digest32) -> Digest32 {
        unsafe withUnsafeTemporaryAllocation(byteCount: 37, alignment: 8) { buffer in
            unsafe buffer.storeBytes(of: UInt8(0x00), toByteOffset: 0, as: UInt8.self)
            unsafe buffer.storeBytes(of: index.littleEndian, toByteOffset: 1, as: UInt32.self)
            // A Digest32 is its 32 bytes (four inline words), so it is stored directly: no closure call.
            unsafe buffer.storeBytes(of: chunkHash, toByteOffset: 5, as: Digest32.self)
            return unsafe Self.hash(UnsafeRawBufferPointer(buffer))
        }
    }

    /// The hash of an internal node at `level` (1 + the left child's level) over its two children.
    public static func node(level: UInt8, left: Digest32, right: Digest32) -> Digest32 {
        unsafe withUnsafeTemporaryAllocation(byteCount: 66, alignment: 8) { buffer in
            unsafe buffer.storeBytes(of: UInt8(0x01), toByteOffset: 0, as: UInt8.self)
            unsafe buffer.storeBytes(of: level, toByteOffset: 1, as: UInt8.self)
            unsafe buffer.storeBytes(of: left, toByteOffset: 2, as: Digest32.self)
            unsafe buffer.storeBytes(of: right, toByteOffset: 34, as: Digest32.self)
            return unsafe Self.hash(UnsafeRawBufferPointer(buffer))
        }
    }

    /// One SHA-256 through the low-level streaming context: OpenSSL 3's one-shot `SHA256()` fetches
    /// the algorithm on every call, which costs more than hashing a 66-byte message.
    static func hash(_ message: UnsafeRawBufferPointer) -> Digest32 {
        var hasher = SHA256()
        unsafe hasher.update(message)
        return hasher.finalize()
    }

    /// The root of a tree with no leaves: SHA-256 of the empty message.
    public static let emptyRoot: Digest32 = SHA256().finalize()
}
