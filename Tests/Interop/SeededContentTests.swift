import Testing

/// The content the upload suites send: it must not change between runs or platforms.
@Suite struct SeededContentTests: SeededContent {
    @Test func bytesAreSplitMix64OutputsLowByteFirst() {
        // SplitMix64 from seed 0 starts 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4 (Steele, Lea and Flood's reference).
        #expect(Self.bytes(9, seed: 0) == [0xAF, 0xCD, 0x1D, 0x7B, 0x39, 0xA8, 0x20, 0xE2, 0xF4])
        #expect(Self.bytes(0, seed: 0).isEmpty)
        #expect(Self.bytes(3, seed: 7) == Array(Self.bytes(16, seed: 7).prefix(3)))
        #expect(Self.bytes(16, seed: 1) != Self.bytes(16, seed: 2))
    }
}
