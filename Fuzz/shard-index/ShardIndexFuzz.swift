import AetherCoding

/// `ShardIndex(json:)`, the index `aether ec encode` writes beside the shards. Properties: no crash;
/// errors are `.malformedIndex`; an accepted index has one digest per shard and the shard size its file
/// size and code imply; its encoding parses back to the same index and is a fixed point.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    let index: ShardIndex
    do {
        index = try ShardIndex(json: unsafe Array(bytes))
    } catch {
        FuzzCheck.require(error.code == .malformedIndex, "a reject must be malformedIndex, got \(error.code)")
        return
    }
    FuzzCheck.accepted("shard index of \(index.code.totalShards) shards")
    FuzzCheck.require(index.shardDigests.count == index.code.totalShards, "digest count is not the shard count")
    FuzzCheck.require(
        index.shardSize == ShardIndex.shardSize(fileSize: index.fileSize, code: index.code), "shard size mismatch")
    guard let encoded = try? index.encoded() else { FuzzCheck.fail("an accepted index does not encode") }
    guard let reparsed = try? ShardIndex(json: encoded) else { FuzzCheck.fail("an encoded index does not parse") }
    FuzzCheck.require(reparsed == index, "an index does not round-trip")
    FuzzCheck.require((try? reparsed.encoded()) == encoded, "index encoding is not a fixed point")
}
