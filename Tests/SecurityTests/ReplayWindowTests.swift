import AetherIO
import Testing

@testable import AetherSecurity

@Suite struct ReplayWindowTests {
    /// Expands the file's steps: `[counter, expect]` or `{from, to, step, expect}`.
    static func steps(_ group: [Any]) throws -> [(UInt64, Bool)] {
        var out: [(UInt64, Bool)] = []
        for step in group {
            if let pair = step as? [Any], pair.count == 2, let counter = pair[0] as? UInt64,
                let expect = pair[1] as? Bool
            {
                out.append((counter, expect))
            } else if let range = step as? [String: Any], let from = range["from"] as? Int,
                let to = range["to"] as? Int,
                let stride = range["step"] as? Int, let expect = range["expect"] as? Bool
            {
                for counter in Swift.stride(from: from, through: to, by: stride) {
                    out.append((UInt64(counter), expect))
                }
            } else {
                throw SecurityError(.malformedMessage, "unreadable replay step")
            }
        }
        return out
    }

    @Test func reproducesEveryReplayWindowCase() throws {
        let file = try VectorFile.load("replay_window_cases.json")
        let params = try #require(file["params"] as? [String: Any])
        #expect(params["width"] as? UInt64 == ReplayWindow.width)
        #expect(params["limit"] as? UInt64 == SessionWire.counterLimit)
        let groups = try #require(file["groups"] as? [[Any]])
        var groupsRead = 0
        var stepsRead = 0
        for (groupIndex, group) in groups.enumerated() {
            var window = ReplayWindow()
            let steps = try Self.steps(group)
            #expect(!steps.isEmpty)
            for (stepIndex, (counter, expected)) in steps.enumerated() {
                let would = window.wouldAccept(counter)
                #expect(window.mark(counter) == expected, "group \(groupIndex) step \(stepIndex) counter \(counter)")
                #expect(would == expected)
                stepsRead += 1
            }
            groupsRead += 1
        }
        #expect(groupsRead == groups.count && groupsRead == 7)
        #expect(stepsRead > 16_000)
    }

    @Test func theEdgeIsLastMinus4095AcceptedAndLastMinus4096Rejected() {
        var window = ReplayWindow()
        #expect(mark(&window, 10_000))
        #expect(!window.wouldAccept(10_000 - 4_096))
        #expect(window.wouldAccept(10_000 - 4_095))
        #expect(mark(&window, 10_000 - 4_095))
        #expect(!mark(&window, 10_000 - 4_095))
        #expect(!window.wouldAccept(SessionWire.counterLimit))
        #expect(mark(&window, SessionWire.counterLimit - 1))
        #expect(window.highest == SessionWire.counterLimit - 1)
    }

    private func mark(_ window: inout ReplayWindow, _ counter: UInt64) -> Bool { window.mark(counter) }

    @Test func aCheckWithoutMarkChangesNothing() {
        var window = ReplayWindow()
        #expect(mark(&window, 5))
        for _ in 0..<3 { #expect(window.wouldAccept(6)) }
        #expect(window.highest == 5)
        #expect(mark(&window, 6))
    }
}
