import AetherIO
import AetherIntegrity

#if canImport(Glibc)
    import Glibc
#endif

/// `aether-bench integrity`: Merkle append and commitment-chain link rates against raw OpenSSL
/// SHA-256 calls on the same number of same-sized messages, measured alternately in one run.
///
/// Two baselines: OpenSSL's one-shot `SHA256()` (which in OpenSSL 3 fetches the algorithm on every
/// call) and the low-level `SHA256_Init/Update/Final` (the fastest OpenSSL path for short
/// messages). The target (>= 0.80) is judged against the faster, low-level one.
struct IntegrityBench: BenchSuite {
    static let name = "integrity"
    static let runsByDefault = true
    static let summary = "Merkle tree, commitment chain and digest-with-manifest rates against raw OpenSSL"

    /// Hash calls a workload makes: (count, message length).
    private typealias Calls = [(count: Int, length: Int)]

    static func run(options: [String]) async throws {
        let leaves = 1_000_000
        // Chunk hashes prepared outside the timed region (AetherIO produces them while reading).
        let chunkHashes = (0..<leaves).map { i in SHA256.hash(Array("chunk-\(i)".utf8)) }
        var sink: UInt8 = 0

        // A Merkle tree of n leaves hashes n 37-byte leaves and n - 1 66-byte nodes (root included).
        let merkle = try measure(calls: [(leaves, 37), (leaves - 1, 66)], sink: &sink) {
            var tree = StreamingMerkleTree()
            for hash in chunkHashes { try tree.append(hash) }
            return tree.root.bytes[0]
        }
        report("merkle_append_1M", leaves, "M leaves/s", merkle, "37+66B")

        // One chain link hashes 69 bytes (jump links add about 1,000 more hashes).
        let chain = try measure(calls: [(leaves, 69)], sink: &sink) {
            var chain = try ChunkCommitmentChain(sessionID: "bench", plannedChunkCount: leaves)
            for hash in chunkHashes { chain.append(hash) }
            return chain.head.bytes[0]
        }
        report("chain_link_1M", leaves, "M links/s", chain, "69B")

        // The ledger does both under one lock (RACE-5).
        let ledger = try measure(calls: [(leaves, 37), (leaves - 1, 66), (leaves, 69)], sink: &sink) {
            let ledger = try ChunkIntegrityLedger(sessionID: "bench", plannedChunkCount: leaves)
            for hash in chunkHashes { _ = try ledger.append(chunkHash: hash) }
            return ledger.merkleRoot.bytes[0]
        }
        report("ledger_append_1M", leaves, "M chunks/s", ledger, "37+66+69B")
        // The floor under the Merkle numbers: AetherIO's `SHA256` value type alone (init, update, finalize).
        let valueType = try measure(calls: [(leaves, 37), (leaves - 1, 66)], sink: &sink) {
            var byte: UInt8 = 0
            unsafe withUnsafeTemporaryAllocation(byteCount: 66, alignment: 8) { buffer in
                unsafe buffer.initializeMemory(as: UInt8.self, repeating: 0x5A)
                for (count, length) in [(leaves, 37), (leaves - 1, 66)] {
                    let message = unsafe UnsafeRawBufferPointer(rebasing: buffer[0..<length])
                    for call in 0..<count {
                        unsafe buffer.storeBytes(of: UInt32(truncatingIfNeeded: call), toByteOffset: 1, as: UInt32.self)
                        var hasher = SHA256()
                        unsafe hasher.update(message)
                        let digest = hasher.finalize()
                        byte ^= unsafe withUnsafeBytes(of: digest) { unsafe $0[0] }
                    }
                }
            }
            return byte
        }
        report("sha256_value_type_2M", 2 * leaves, "M hashes/s", valueType, "37+66B")
        if options.contains("--print-sink") { print("sink \(sink)") }
        try digestWithManifest()
    }

    /// `aether digest` with the Merkle root and chain (the manifest built while the file is read)
    /// against AetherIO's plain single-pass digest of the same page-cached 1 GiB file, rounds paired.
    static func digestWithManifest() throws {
        let path = "/tmp/aether-bench-integrity-\(getpid()).bin"
        let size = 1 << 30
        try IOBench.makeRandomFile(path, size: size)
        defer { _ = unsafe unlink(path) }
        let options = ChunkReadOptions()
        var plain: [Double] = []
        var withManifest: [Double] = []
        var roots: Set<Digest32> = []
        for round in 0..<6 {
            var start = Measure.now()
            _ = try FileDigester.digest(path: path, options: options) { _, _ in }
            let plainTime = Measure.now() - start
            start = Measure.now()
            let stream = try FileDigestStream(path: path, options: options)
            var builder = try ManifestBuilder(
                fileSize: UInt64(stream.fingerprint.size), chunkSize: options.chunkSize, sessionID: "bench")
            while let (_, digest) = try stream.next() {
                try builder.append(ManifestChunk(length: digest.length, sha256: digest.sha256, crc32c: digest.crc32c))
            }
            let manifest = try builder.finish(fileSHA256: stream.finish().sha256)
            let manifestTime = Measure.now() - start
            roots.insert(manifest.merkleRoot)
            // The first round warms the page cache for both.
            if round > 0 {
                plain.append(plainTime)
                withManifest.append(manifestTime)
            }
        }
        guard roots.count == 1 else { throw BenchError("the Merkle root changed between rounds") }
        Measure.line(
            "digest+merkle+chain (1 GiB)", Measure.rate(bytes: size, seconds: IOBench.median(withManifest)),
            ratios: [("ratio_vs_plain_digest", IOBench.pairedRatio(plain, withManifest))])
    }

    private static func report(
        _ name: String, _ items: Int, _ unit: String, _ times: (candidate: Double, oneShot: Double, lowLevel: Double),
        _ sizes: String
    ) {
        Measure.line(
            name, Measure.formatted(Double(items) / times.candidate / 1e6, decimals: 2) + " " + unit,
            ratios: [
                ("ratio_vs_openssl_sha256_lowlevel_\(sizes)", times.lowLevel / times.candidate),
                ("ratio_vs_openssl_SHA256_oneshot_\(sizes)", times.oneShot / times.candidate),
            ])
    }

    /// Median seconds of the candidate and both baselines, timed in turn (7 rounds after a warm-up)
    /// so that load from other processes hits all three alike.
    private static func measure(
        calls: Calls, sink: inout UInt8, candidate: () throws -> UInt8
    ) throws -> (candidate: Double, oneShot: Double, lowLevel: Double) {
        func oneShot() -> UInt8 {
            calls.reduce(0) { $0 ^ OpenSSLBaseline.sha256Calls(count: $1.count, length: $1.length) }
        }
        func lowLevel() -> UInt8 {
            calls.reduce(0) { $0 ^ OpenSSLBaseline.sha256LowLevelCalls(count: $1.count, length: $1.length) }
        }
        sink ^= try candidate() ^ oneShot() ^ lowLevel()
        var times: [[Double]] = [[], [], []]
        for _ in 0..<7 {
            var start = Measure.now()
            sink ^= lowLevel()
            times[2].append(Measure.now() - start)
            start = Measure.now()
            sink ^= try candidate()
            times[0].append(Measure.now() - start)
            start = Measure.now()
            sink ^= oneShot()
            times[1].append(Measure.now() - start)
        }
        let medians = times.map { $0.sorted()[3] }
        return (medians[0], medians[1], medians[2])
    }
}
