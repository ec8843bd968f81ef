import AetherIO
import Testing

@testable import AetherScheduling

@Suite struct EndpointSelectorTests {
    @Test func convergesOnTheFastestEndpoint() {
        var selector = EndpointSelector(endpoints: ["a", "b", "c"])
        var generator = SplitMix64(seed: 42)
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
        var generator = SplitMix64(seed: 7)
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
