import AetherIO
import Testing

@testable import AetherSecurity

/// Reproduces Vectors/session_differential.json: the seeded mutation generator of docs/SECURE-SESSION.md
/// section 5, run over every parser; inputs digest, verdict bits and accepted-output digest must match.
@Suite struct SessionDifferentialTests {
    static let interesting: [UInt8] = [0x00, 0x01, 0x02, 0x03, 0x3f, 0x40, 0x41, 0x7f, 0x80, 0xfe, 0xff]

    static func mutate(_ rng: inout SplitMix64, _ bases: [[UInt8]]) -> [UInt8] {
        var b = bases[rng.below(bases.count)]
        for _ in 0..<rng.below(4) {
            let op = rng.below(7)
            let n = b.count
            switch op {
            case 0 where n > 0:
                let j = rng.below(8 * n)
                b[j / 8] ^= UInt8(1 << (j % 8))
            case 1 where n > 0:
                let j = rng.below(n)
                b[j] = UInt8(rng.below(256))
            case 2 where n > 0: b.removeSubrange(rng.below(n)...)
            case 3:
                for _ in 0..<(1 + rng.below(4)) { b.append(UInt8(rng.below(256))) }
            case 4 where n > 0: b.remove(at: rng.below(n))
            case 5:
                let j = rng.below(n + 1)
                b.insert(UInt8(rng.below(256)), at: j)
            case 6 where n > 0:
                let j = rng.below(n)
                b[j] = interesting[rng.below(interesting.count)]
            default: break
            }
        }
        return b
    }

    static func framed(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.appendBigEndian(UInt32(bytes.count))
        return out + bytes
    }

    @Test func swiftParsersReproduceEveryVerdictAndDigest() throws {
        let file = try VectorFile.load("session_differential.json")
        let seedText = try #require(file["seed"] as? String)
        let seed = try #require(UInt64(seedText, radix: 16))
        let count = try #require(file["inputs_per_parser"] as? Int)
        #expect(count == 4_000)
        let parsers = try #require(file["parsers"] as? [[String: Any]])
        #expect(parsers.compactMap { $0["parser"] as? String } == SessionParserTable.names)
        var checked = 0
        for (index, entry) in parsers.enumerated() {
            let name = try #require(entry["parser"] as? String)
            let bases = try #require(entry["bases"] as? [String]).map { try Hex.decode($0) }
            var rng = SplitMix64(seed: seed ^ (UInt64(index + 1) &* 0x9e37_79b9_7f4a_7c15))
            var inputs = SHA256()
            var accepted = SHA256()
            var verdicts = [UInt8](repeating: 0, count: (count + 7) / 8)
            var acceptedCount = 0
            for i in 0..<count {
                let input = Self.mutate(&rng, bases)
                inputs.update(Self.framed(input))
                guard let output = try? SessionParserTable.parse(name, input) else { continue }
                verdicts[i / 8] |= 0x80 >> UInt8(i % 8)
                acceptedCount += 1
                accepted.update(Self.framed(output))
                // Strict parsers are exact inverses of the encoders.
                let canonical = name == "record_header" ? Array(output.prefix(20)) : output
                #expect(canonical == input, "\(name) input \(i) re-encodes differently")
            }
            #expect(inputs.finalize().hex == entry["inputs_sha256"] as? String, "\(name) inputs")
            #expect(Hex.encode(verdicts) == entry["verdicts"] as? String, "\(name) verdicts")
            #expect(accepted.finalize().hex == entry["accepted_sha256"] as? String, "\(name) accepted outputs")
            #expect(acceptedCount == entry["accepted"] as? Int, "\(name) accepted count")
            checked += 1
        }
        #expect(checked == parsers.count && checked == 17)
    }
}

extension SplitMix64 {
    /// `next() % bound`, the reduction docs/SECURE-SESSION.md section 5 specifies.
    fileprivate mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
