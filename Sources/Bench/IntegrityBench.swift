import AetherIO
import AetherIntegrity

/// `aether-bench integrity`: Merkle append and commitment-chain link rates against raw OpenSSL
/// SHA-256 calls on the same message sizes, measured alternately in the same run.
struct IntegrityBench: BenchSuite {
    static let name = "integrity"
    static let runsByDefault = true

    static func run(options: [String]) async throws {
        let leaves = 1_000_000
        // Chunk hashes prepared outside the timed region (AetherIO produces them while reading).
        let chunkHashes = (0..<leaves).map { i in SHA256.hash(Array("chunk-\(i)".utf8)) }
        var sink: UInt8 = 0

        // A Merkle tree of n leaves hashes n 37-byte leaves and n - 1 66-byte nodes (root included).
        let merkle = try alternate(
            candidate: {
                var tree = StreamingMerkleTree()
                for hash in chunkHashes { try tree.append(hash) }
                sink ^= tree.root.bytes[0]
            },
            baseline: {
                sink ^= IntegrityOpenSSL.sha256Calls(count: leaves, length: 37)
                sink ^= IntegrityOpenSSL.sha256Calls(count: leaves - 1, length: 66)
            })
        Measure.line(
            "merkle_append_1M", Measure.formatted(Double(leaves) / merkle.candidate / 1e6, decimals: 2) + " M leaves/s",
            ratios: [("ratio_vs_openssl_sha256_37+66B", merkle.baseline / merkle.candidate)])

        // One chain link hashes 69 bytes.
        let chain = try alternate(
            candidate: {
                var chain = try ChunkCommitmentChain(sessionID: "bench", plannedChunkCount: leaves)
                for hash in chunkHashes { chain.append(hash) }
                sink ^= chain.head.bytes[0]
            },
            baseline: { sink ^= IntegrityOpenSSL.sha256Calls(count: leaves, length: 69) })
        Measure.line(
            "chain_link_1M", Measure.formatted(Double(leaves) / chain.candidate / 1e6, decimals: 2) + " M links/s",
            ratios: [("ratio_vs_openssl_sha256_69B", chain.baseline / chain.candidate)])

        // The ledger does both under one lock (RACE-5).
        let ledger = try alternate(
            candidate: {
                let ledger = try ChunkIntegrityLedger(sessionID: "bench", plannedChunkCount: leaves)
                for hash in chunkHashes { _ = try ledger.append(chunkHash: hash) }
                sink ^= ledger.merkleRoot.bytes[0]
            },
            baseline: {
                sink ^= IntegrityOpenSSL.sha256Calls(count: leaves, length: 37)
                sink ^= IntegrityOpenSSL.sha256Calls(count: leaves - 1, length: 66)
                sink ^= IntegrityOpenSSL.sha256Calls(count: leaves, length: 69)
            })
        Measure.line(
            "ledger_append_1M", Measure.formatted(Double(leaves) / ledger.candidate / 1e6, decimals: 2) + " M chunks/s",
            ratios: [("ratio_vs_openssl_sha256_37+66+69B", ledger.baseline / ledger.candidate)])
        if sink == 0x01 && options.contains("--print-sink") { print("sink \(sink)") }
    }

    /// Median seconds of `candidate` and `baseline`, timed alternately (7 runs after 1 warm-up
    /// each) so that load from other processes hits both alike.
    private static func alternate(
        candidate: () throws -> Void, baseline: () throws -> Void
    ) throws -> (candidate: Double, baseline: Double) {
        try candidate()
        try baseline()
        var candidates: [Double] = []
        var baselines: [Double] = []
        for _ in 0..<7 {
            var start = Measure.now()
            try baseline()
            baselines.append(Measure.now() - start)
            start = Measure.now()
            try candidate()
            candidates.append(Measure.now() - start)
        }
        return (candidates.sorted()[3], baselines.sorted()[3])
    }
}
