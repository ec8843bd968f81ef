import AetherCoding
import AetherIO

/// `aether-bench coding`: Reed-Solomon k = 10, m = 4 over 1 MiB shards against ISA-L's `ec_encode_data`
/// with the same Cauchy matrix on the same memory, and the SIMD kernel against the portable Swift one.
/// Rates are data bytes (k shards) per second; Aether and its baseline alternate run by run so that
/// load from other processes hits both alike.
enum CodingBench: BenchSuite {
    static let name = "coding"
    static let runsByDefault = true
    static let summary = "Reed-Solomon k=10 m=4 encode and rebuild against ISA-L"

    static let k = 10
    static let m = 4
    static let shardSize = 1 << 20

    static func run(options: [String]) async throws {
        let code = try ReedSolomonCode(dataShards: k, parityShards: m)
        let stripe = try ShardStripe(code: code, shardCapacity: shardSize)
        var generator = SecureRandom()
        for index in 0..<k {
            unsafe stripe.withUnsafeMutableBytes(ofShard: index) { raw in
                for offset in 0..<raw.count { unsafe raw[offset] = UInt8.random(in: 0...255, using: &generator) }
            }
        }
        let dataBytes = k * shardSize
        let encoder = ReedSolomonEncoder(code: code)
        let portable = ReedSolomonEncoder(code: code, kernel: .portable)

        // ISA-L on the same stripe memory, with the same matrix and its own tables.
        let matrix = ISAL.cauchyMatrix(k: k, m: m)
        var encodeTables = ISAL.initTables(k: k, rows: m, coefficients: Array(matrix[(k * k)...]))
        let lost = [0, 1, 2, 3]
        let survivors = Array(lost.count..<(k + lost.count))
        var square: [UInt8] = []
        for row in survivors { square += matrix[(row * k)..<((row + 1) * k)] }
        guard let inverse = ISAL.invert(square, size: k) else {
            throw CodingError(.singularMatrix, "ISA-L could not invert the survivors' matrix")
        }
        var decodeRows: [UInt8] = []
        for row in lost { decodeRows += inverse[(row * k)..<((row + 1) * k)] }
        var decodeTables = ISAL.initTables(k: k, rows: lost.count, coefficients: decodeRows)
        let pointers = unsafe stripe.withUnsafeShardPointers { unsafe Array($0) }
        var encodeInputs = unsafe Array(pointers[0..<k])
        var encodeOutputs = unsafe Array(pointers[k..<(k + m)])
        var decodeInputs = unsafe survivors.map { unsafe pointers[$0] }
        var decodeOutputs = unsafe lost.map { unsafe pointers[$0] }

        func isalEncode() {
            unsafe ISAL.encodeData(
                length: shardSize, k: k, rows: m, tables: &encodeTables, inputs: &encodeInputs, outputs: &encodeOutputs)
        }
        func isalDecode() {
            unsafe ISAL.encodeData(
                length: shardSize, k: k, rows: lost.count, tables: &decodeTables, inputs: &decodeInputs,
                outputs: &decodeOutputs)
        }

        // Sanity: both produce the same parity, and the decoder restores the data, before any timing.
        let original = (0..<(k + m)).map { index in
            index < k ? stripe.bytes(ofShard: index) : []
        }
        isalEncode()
        let isalParity = (k..<(k + m)).map { stripe.bytes(ofShard: $0) }
        for index in k..<(k + m) { stripe.clearShard(index) }
        try encoder.encode(stripe, shardLength: shardSize)
        guard (k..<(k + m)).map({ stripe.bytes(ofShard: $0) }) == isalParity else {
            throw CodingError(.verificationFailed, "Aether's parity differs from ISA-L's")
        }
        let decoder = try ReedSolomonDecoder(code: code, present: (0..<(k + m)).map { !lost.contains($0) })
        for index in lost { stripe.clearShard(index) }
        try decoder.reconstruct(stripe, shardLength: shardSize)
        guard lost.allSatisfy({ stripe.bytes(ofShard: $0) == original[$0] }) else {
            throw CodingError(.verificationFailed, "Aether's decoder did not restore the data")
        }

        let repeats = 16
        let (encodeOurs, encodeTheirs) = try paired {
            for _ in 0..<repeats { try encoder.encode(stripe, shardLength: shardSize) }
        } baseline: {
            for _ in 0..<repeats { isalEncode() }
        }
        Measure.line(
            "rs_encode_k10_m4_1MiB", Measure.rate(bytes: dataBytes * repeats, seconds: encodeOurs),
            ratios: [("ratio_vs_isal_ec_encode_data", encodeTheirs / encodeOurs)])

        let (decodeOurs, decodeTheirs) = try paired {
            for _ in 0..<repeats { try decoder.reconstruct(stripe, shardLength: shardSize) }
        } baseline: {
            for _ in 0..<repeats { isalDecode() }
        }
        Measure.line(
            "rs_decode_k10_m4_lost4", Measure.rate(bytes: dataBytes * repeats, seconds: decodeOurs),
            ratios: [("ratio_vs_isal_ec_encode_data", decodeTheirs / decodeOurs)])

        let (simd, swift) = try paired(runs: 5) {
            try encoder.encode(stripe, shardLength: shardSize)
        } baseline: {
            try portable.encode(stripe, shardLength: shardSize)
        }
        Measure.line(
            "rs_encode_simd_vs_swift", Measure.rate(bytes: dataBytes, seconds: simd),
            ratios: [("ratio_vs_portable_swift", swift / simd)])

    }

    /// Median seconds of `body` and of `baseline`, measured alternately after a warm-up of each.
    static func paired(
        runs: Int = 9, _ body: () throws -> Void, baseline: () throws -> Void
    ) rethrows -> (Double, Double) {
        try body()
        try baseline()
        var ours: [Double] = []
        var theirs: [Double] = []
        for _ in 0..<runs {
            var start = Measure.now()
            try body()
            ours.append(Measure.now() - start)
            start = Measure.now()
            try baseline()
            theirs.append(Measure.now() - start)
        }
        ours.sort()
        theirs.sort()
        return (ours[runs / 2], theirs[runs / 2])
    }
}
