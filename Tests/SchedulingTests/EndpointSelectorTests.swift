import Testing

@testable import AetherScheduling

@Suite struct EndpointSelectorTests {
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func convergesOnTheFastestEndpoint() {
        var selector = EndpointSelector(endpoints: ["a", "b", "c"])
        var generator = Seeded(state: 42)
        let speeds = [10e6, 50e6, 20e6]
        var picks = [0, 0, 0]
        for round in 0..<300 {
            let choice = selector.choose(using: &generator)
            if round >= 200 { picks[choice] += 1 }
            let wobble = 1 + 0.1 * Double(round % 5 - 2) / 2
            selector.record(endpoint: choice, bitsPerSecond: speeds[choice] * wobble)
        }
        #expect(picks[1] > 90)
    }

    @Test func triesEveryEndpointEarly() {
        var selector = EndpointSelector(endpoints: ["a", "b", "c", "d"])
        var generator = Seeded(state: 7)
        for _ in 0..<40 {
            let choice = selector.choose(using: &generator)
            selector.record(endpoint: choice, bitsPerSecond: 5e6)
        }
        for index in 0..<4 { #expect(selector.observations(endpoint: index) > 0) }
    }

    @Test func anEmptyEndpointListIsAProgrammerError() async {
        await #expect(processExitsWith: .failure) {
            _ = EndpointSelector(endpoints: [])
        }
    }

    @Test func ignoresOutOfRangeAndNonFiniteRecords() {
        var selector = EndpointSelector(endpoints: ["a"])
        selector.record(endpoint: 5, bitsPerSecond: 1e6)
        selector.record(endpoint: 0, bitsPerSecond: .nan)
        #expect(selector.observations(endpoint: 0) == 0)
    }
}
