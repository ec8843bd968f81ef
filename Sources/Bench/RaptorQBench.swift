import AetherCoding
import AetherIO
import Foundation

/// The RaptorQ lines of `aether-bench coding`: encode (source + 10% repair packets) and decode (every twentieth
/// packet lost) of 1 MiB and 16 MiB objects at T = 1,280, against the PyPI `raptorq` package (Rust) on the
/// same input in the same run (its peer script times only the encode/decode calls, not interpreter
/// start-up), and Reed-Solomon (k = 10, m = 1, also 10% parity) on the same object for the RS-to-RaptorQ
/// speed ratio.
enum RaptorQBench {
    static let symbolSize = 1280

    static func run() throws {
        for size in [1 << 20, 16 << 20] {
            var generator = SplitMix64(seed: UInt64(size))
            let data = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let oti = try RaptorQTransmissionInformation.derived(transferLength: UInt64(size), symbolSize: symbolSize)
            let repair = (oti.sourceSymbols(inBlock: 0) + 9) / 10
            let label = size >> 20 == 1 ? "1MiB" : "16MiB"
            let runs = size > 1 << 20 ? 3 : 7

            var packets: [RaptorQPacket] = []
            let encodeSeconds = try Measure.median(runs: runs, warmup: 1) {
                packets = try RaptorQEncoder(data: data, transmissionInformation: oti).packets(
                    repairSymbolsPerBlock: repair)
            }
            let kept = packets.enumerated().filter { $0.offset % 20 != 0 }.map { $0.element }
            var decoded: [UInt8]?
            let decodeSeconds = try Measure.median(runs: runs, warmup: 1) {
                var decoder = try RaptorQDecoder(transmissionInformation: oti)
                for packet in kept where decoder.progress != .decoded { try decoder.add(packet) }
                decoded = decoder.decodedObject
            }
            guard decoded == data else { throw BenchError("RaptorQ decode did not restore the data") }

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

            let theirEncode = python(["time-encode", "\(symbolSize)", "\(repair)", "\(runs)"], input: data)
            let theirDecode = python(["time-decode", "\(symbolSize)", "\(repair)", "\(runs)"], input: data)
            var encodeRatios: [(String, Double)] = []
            var decodeRatios: [(String, Double)] = []
            if let theirEncode { encodeRatios.append(("ratio_vs_pypi_raptorq", theirEncode / encodeSeconds)) }
            if let theirDecode { decodeRatios.append(("ratio_vs_pypi_raptorq", theirDecode / decodeSeconds)) }
            encodeRatios.append(("rs_to_raptorq_speed", encodeSeconds / rsSeconds))
            Measure.line(
                "raptorq_encode_\(label)_T1280_r10", Measure.rate(bytes: size, seconds: encodeSeconds),
                ratios: encodeRatios)
            Measure.line(
                "raptorq_decode_\(label)_T1280_r10", Measure.rate(bytes: size, seconds: decodeSeconds),
                ratios: decodeRatios)
            if theirEncode == nil || theirDecode == nil {
                print("  (no PyPI raptorq baseline: run `make venv`, or set AETHER_PYTHON to a Python with raptorq)")
            }
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
