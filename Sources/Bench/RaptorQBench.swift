import AetherCoding
import AetherIO
import Foundation

/// `aether-bench raptorq`: encode (source + 10% repair packets) and decode (every twentieth packet lost) of
/// 1 MiB and 16 MiB objects at T = 1,280, against the PyPI `raptorq` package (Rust) on the same input in
/// the same run (its peer script times only the encode/decode calls, after one untimed run, not interpreter
/// start-up), and Reed-Solomon (k = 10, m = 1, also 10% parity) on the same object for the RS-to-RaptorQ
/// speed ratio; then the decode failure rates.
///
/// The machine is shared, so each of Aether's timed runs is paired with one of the peer's taken right after
/// it, and the ratio printed is the median of the run-by-run ratios: a burst of load from other jobs then
/// slows both sides of a pair rather than one side of the whole comparison.
///
/// Options (for profiling one side alone, e.g. under callgrind with `AETHER_PYTHON` unset to a missing file):
/// `--size-mib N` codes only an N MiB object, `--runs N` takes N timed runs, `--lines LIST` picks among
/// `encode,decode,failure`.
enum RaptorQBench: BenchSuite {
    static let name = "raptorq"
    static let runsByDefault = true
    static let summary = "RaptorQ (RFC 6330) encode and decode against the PyPI raptorq package (Rust)"
    static let symbolSize = 1280

    static let allLines = ["encode", "decode", "failure"]

    static func run(options: [String]) async throws {
        let size = try E2EBench.option("--size-mib", in: options).map { try E2EBench.mebibytes($0, default: 1) << 20 }
        let runs = try E2EBench.option("--runs", in: options).map { text in
            guard let runs = Int(text), runs >= 1, runs <= 1000 else {
                throw BenchError("--runs takes a whole number of runs (1...1000), not \(text)")
            }
            return runs
        }
        var lines = Set(allLines)
        if let text = try E2EBench.option("--lines", in: options) {
            let names = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard names.allSatisfy(allLines.contains) else {
                throw BenchError(
                    "--lines takes a comma-separated list of \(allLines.joined(separator: ", ")), not \(text)")
            }
            lines = Set(names)
        }
        try run(sizes: size.map { [$0] } ?? [1 << 20, 16 << 20], runs: runs, lines: lines)
    }

    static func run(sizes: [Int], runs requestedRuns: Int?, lines: Set<String>) throws {
        for size in sizes where lines.contains("encode") || lines.contains("decode") {
            var generator = SplitMix64(seed: UInt64(size))
            let data = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let oti = try RaptorQTransmissionInformation.derived(transferLength: UInt64(size), symbolSize: symbolSize)
            let repair = (oti.sourceSymbols(inBlock: 0) + 9) / 10
            let label = "\(size >> 20)MiB"
            let runs = requestedRuns ?? (size > 1 << 20 ? 5 : 7)

            // The peer's get_encoded_packets returns each packet as bytes (payload ID + symbol), so ours are
            // serialized too, inside the timing.
            var packets: [[UInt8]] = []
            func encodeAll() throws {
                packets = try RaptorQEncoder(data: data, transmissionInformation: oti).packets(
                    repairSymbolsPerBlock: repair
                ).map(\.serialized)
            }
            var encode: (seconds: Double, ratio: Double?)?
            if lines.contains("encode") {
                encode = try paired(runs: runs, peer: ["time-encode", "\(symbolSize)", "\(repair)"], input: data) {
                    try encodeAll()
                }
            } else {
                try encodeAll()
            }
            // The peer's decoder parses each packet from its bytes, so ours does too.
            let kept = packets.enumerated().filter { $0.offset % 20 != 0 }.map { $0.element }
            var decode: (seconds: Double, ratio: Double?)?
            if lines.contains("decode") {
                var decoded: [UInt8]?
                decode = try paired(runs: runs, peer: ["time-decode", "\(symbolSize)", "\(repair)"], input: data) {
                    var decoder = try RaptorQDecoder(transmissionInformation: oti)
                    for packet in kept where decoder.progress != .decoded { try decoder.add(serialized: packet) }
                    decoded = decoder.decodedObject
                }
                guard decoded == data else { throw BenchError("RaptorQ decode did not restore the data") }
            }

            if let encode {
                let k = 10
                let shardLength = (size + k - 1) / k
                var shards = (0..<k).map { index in
                    Array(data[min(index * shardLength, size)..<min((index + 1) * shardLength, size)])
                }
                for index in 0..<k {
                    shards[index].append(contentsOf: repeatElement(0, count: shardLength - shards[index].count))
                }
                let code = try ReedSolomonCode(dataShards: k, parityShards: 1)
                let rsSeconds = try Measure.median(runs: runs, warmup: 1) { _ = try code.encode(shards) }
                var ratios: [(String, Double)] = []
                if let ratio = encode.ratio { ratios.append(("ratio_vs_pypi_raptorq", ratio)) }
                ratios.append(("rs_to_raptorq_speed", encode.seconds / rsSeconds))
                Measure.line(
                    "raptorq_encode_\(label)_T1280_r10", Measure.rate(bytes: size, seconds: encode.seconds),
                    ratios: ratios)
            }
            if let decode {
                Measure.line(
                    "raptorq_decode_\(label)_T1280_r10", Measure.rate(bytes: size, seconds: decode.seconds),
                    ratios: decode.ratio.map { [("ratio_vs_pypi_raptorq", $0)] } ?? [])
            }
            if encode.map({ $0.ratio == nil }) ?? false || decode.map({ $0.ratio == nil }) ?? false {
                print("  (no PyPI raptorq baseline: run `make venv`, or set AETHER_PYTHON to a Python with raptorq)")
            }
        }
        if lines.contains("failure") { try failureRates() }
    }

    /// The median seconds of `body` over `runs` timed runs (after one untimed), and the median over the runs
    /// of the peer's seconds for the same work (`peer` + one run, timed right after each of ours) divided by
    /// ours; nil when the peer cannot run.
    static func paired(
        runs: Int, peer: [String], input: [UInt8], _ body: () throws -> Void
    ) throws -> (seconds: Double, ratio: Double?) {
        try body()
        var ours: [Double] = []
        var ratios: [Double] = []
        var peerRuns = true
        for _ in 0..<runs {
            let start = Measure.now()
            try body()
            let seconds = Measure.now() - start
            ours.append(seconds)
            if peerRuns, let theirs = python(peer + ["1"], input: input) {
                ratios.append(theirs / seconds)
            } else {
                peerRuns = false
            }
        }
        ours.sort()
        ratios.sort()
        return (ours[ours.count / 2], peerRuns && !ratios.isEmpty ? ratios[ratios.count / 2] : nil)
    }

    /// Decode failure rate at overhead 0, 1 and 2 (K, K + 1, K + 2 symbols received, chosen at random
    /// from ESIs 0 ..< 2K, so about half are repair symbols), seeded, beside RFC 6330's figures for a
    /// compliant decoder: under 1 in 100, 1 in 10,000 and 1 in 1,000,000.
    static func failureRates() throws {
        var generator = SplitMix64(seed: 6330)
        for (k, trials) in [(10, 20_000), (100, 10_000), (1000, 1_000)] {
            let t = 16
            let data = (0..<(k * t)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoder = try RaptorQEncoder(data: data, symbolSize: t)
            let block = encoder.blocks[0]
            let symbols = try (0..<UInt32(2 * k)).map { try block.symbol(esi: $0) }
            var failures = [0, 0, 0]
            for _ in 0..<trials {
                let chosen = Array((0..<UInt32(2 * k)).shuffled(using: &generator).prefix(k + 2))
                for overhead in 0...2 {
                    var decoder = try RaptorQBlockDecoder(
                        transmissionInformation: encoder.transmissionInformation, sourceBlockNumber: 0)
                    for esi in chosen.prefix(k + overhead) { try decoder.add(esi: esi, symbol: symbols[Int(esi)]) }
                    if decoder.progress != .decoded {
                        failures[overhead] += 1
                    } else if decoder.decodedBlock != data {
                        throw BenchError("RaptorQ decoded wrong data")
                    }
                }
            }
            func percent(_ count: Int) -> String {
                Measure.formatted(Double(count) * 100 / Double(trials), decimals: 3) + "%"
            }
            print(
                Measure.pad("raptorq_failure_K\(k)", 28) + Measure.pad("\(trials) trials", 14)
                    + "overhead0=\(percent(failures[0]))  overhead1=\(percent(failures[1]))  "
                    + "overhead2=\(percent(failures[2]))  rfc6330: <1% <0.01% <0.0001%")
        }
    }

    /// Median seconds printed by Tests/Interop/peers/raptorq_peer.py, or nil when the peer cannot run.
    static func python(_ arguments: [String], input: [UInt8]) -> Double? {
        let interpreter = ProcessInfo.processInfo.environment["AETHER_PYTHON"] ?? ".venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: interpreter) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: interpreter)
        process.arguments = ["Tests/Interop/peers/raptorq_peer.py"] + arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        do { try process.run() } catch { return nil }
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return Double(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
