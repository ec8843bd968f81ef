import AetherCoding
import AetherIO
import Foundation
import Testing

/// Live interop with the PyPI `raptorq` package (Rust, through peers/raptorq_peer.py): packets from each
/// side decode on the other, across object sizes (one that needs two source blocks), symbol sizes, and
/// random loss up to 50% with repair symbols to make up for it.
@Suite struct RaptorQInteropTests {
    static func framed(_ packets: [[UInt8]]) -> Data {
        var out = Data()
        for packet in packets {
            let length = UInt32(packet.count)
            out.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF)])
            out.append(UInt8(length & 0xFF))
            out.append(contentsOf: packet)
        }
        return out
    }

    static func frames(_ data: Data) -> [[UInt8]] {
        let bytes = Array(data)
        var out: [[UInt8]] = []
        var offset = 0
        while offset + 4 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            out.append(Array(bytes[offset + 4..<offset + 4 + length]))
            offset += 4 + length
        }
        return out
    }

    /// (object size, symbol size, loss). 600,000 bytes at T = 8 needs two source blocks of 37,500 symbols.
    static let cases: [(Int, Int, Double)] = [
        (1, 8, 0), (1000, 64, 0.3), (100_000, 1280, 0.5), (262_147, 512, 0.2), (50_000, 48, 0.5),
        (600_000, 8, 0.1),
    ]

    @Test(arguments: cases)
    func raptorqDecodesAethersPackets(size: Int, symbolSize: Int, loss: Double) throws {
        var generator = SplitMix64(seed: UInt64(size * 7 + symbolSize))
        let data = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let encoder = try RaptorQEncoder(data: data, symbolSize: symbolSize)
        let oti = encoder.transmissionInformation
        var kept: [[UInt8]] = []
        for block in encoder.blocks {
            // Lose exactly `loss` of the packets sent, at random, and send enough that K + 2 arrive.
            let total = Int((Double(block.sourceSymbols + 2) / (1 - loss)).rounded(.up))
            let lost = Set((0..<total).shuffled(using: &generator).prefix(Int(Double(total) * loss)))
            for esi in 0..<total where !lost.contains(esi) {
                kept.append(try block.packet(esi: UInt32(esi)).serialized)
            }
        }
        kept.shuffle(using: &generator)
        let output = try PythonPeer.run(
            "raptorq_peer.py", ["decode", "\(oti.transferLength)", "\(symbolSize)"], input: Self.framed(kept))
        let rebuilt = Array(output) == data
        #expect(rebuilt, "raptorq did not rebuild Aether's object (Z = \(oti.sourceBlocks))")
    }

    @Test(arguments: cases)
    func aetherDecodesRaptorqsPackets(size: Int, symbolSize: Int, loss: Double) throws {
        var generator = SplitMix64(seed: UInt64(size * 13 + symbolSize))
        let data = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let oti = try RaptorQTransmissionInformation.derived(transferLength: UInt64(size), symbolSize: symbolSize)
        let k = oti.sourceSymbols(inBlock: 0)
        let repair = Int((Double(k + 2) / (1 - loss)).rounded(.up)) - k
        let output = try PythonPeer.run(
            "raptorq_peer.py", ["encode", "\(symbolSize)", "\(repair)", "\(loss)", "\(size)"], input: Data(data))
        var decoder = try RaptorQDecoder(transmissionInformation: oti)
        let packets = Self.frames(output)
        #expect(!packets.isEmpty)
        for packet in packets where decoder.progress != .decoded { try decoder.add(serialized: packet) }
        #expect(decoder.progress == .decoded, "Aether could not decode raptorq's \(packets.count) packets")
        let rebuilt = decoder.decodedObject == data
        #expect(rebuilt, "Aether's object differs from the data raptorq encoded")
    }
}
