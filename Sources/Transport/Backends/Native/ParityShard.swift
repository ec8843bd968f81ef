package import AetherIO

/// One parity shard of a group (`docs/PROTOCOL.md` section 3.3), sent with `NativeBackend.send(_:to:)`:
/// shard `shard` (0 ..< parity) of group `group`, `chunkSize` bytes (data chunks shorter than `chunkSize` enter the
/// code zero-padded).
package struct ParityShard: Sendable {
    /// The group index.
    package let group: Int
    /// The shard index within the group's parity shards.
    package let shard: Int
    /// The bytes.
    package let body: HTTPRequestBody
    /// The number of bytes (the upload's chunk size).
    package let length: Int64
    /// SHA-256 of the bytes.
    package let sha256: Digest32
    /// CRC32C of the bytes.
    package let crc32c: UInt32
    /// The `Idempotency-Key` for this attempt, if any.
    package let idempotencyKey: String?

    /// A shard.
    package init(
        group: Int, shard: Int, body: HTTPRequestBody, length: Int64, sha256: Digest32, crc32c: UInt32,
        idempotencyKey: String? = nil
    ) {
        self.group = group
        self.shard = shard
        self.body = body
        self.length = length
        self.sha256 = sha256
        self.crc32c = crc32c
        self.idempotencyKey = idempotencyKey
    }
}
