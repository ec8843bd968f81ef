import Testing

@testable import AetherCoding

@Suite struct AdaptiveRedundancyTests {
    // Reference values computed independently with Python's exact math.comb sums.
    @Test(arguments: [
        (10, 4, 0.05, 0.0004273904708776153),
        (1, 1, 0.1, 0.01),
        (2, 0, 0.5, 0.75),
        (3, 0, 0.0, 0.0),
    ])
    func groupFailureIsTheBinomialTail(k: Int, m: Int, p: Double, expected: Double) throws {
        let value = try AdaptiveRedundancy.groupFailureProbability(dataShards: k, parityShards: m, lossRate: p)
        #expect(abs(value - expected) <= 1e-12 + 1e-9 * expected)
    }

    // (k, loss, target) -> m, from Python: smallest m with the exact tail <= target.
    @Test(arguments: [
        (10, 0.05, 1e-6, 7), (10, 0.01, 1e-6, 4), (32, 0.08, 1e-9, 19), (200, 0.08, 1e-6, 42),
        (10, 0.05, 1e-9, 10), (10, 0.05, 1e-3, 4), (10, 0.0, 1e-6, 0),
    ])
    func parityIsTheSmallestCountMeetingTheTarget(k: Int, p: Double, target: Double, expected: Int) throws {
        let m = try AdaptiveRedundancy.parityShards(dataShards: k, lossRate: p, targetFailureProbability: target)
        #expect(m == expected)
        if let m, m > 0 {
            let fewer = try AdaptiveRedundancy.groupFailureProbability(dataShards: k, parityShards: m - 1, lossRate: p)
            #expect(fewer > target)
        }
    }

    @Test func ultrafastLinksGetNoParityWhateverTheLoss() throws {
        for p in [0.0, 0.01, 0.08, 0.2] {
            #expect(try AdaptiveRedundancy.decide(dataShards: 10, lossRate: p, ultrafastLink: true) == .none)
        }
    }

    @Test func reedSolomonUpToEightPercentLossAndFountainAbove() throws {
        let atThreshold = try #require(try AdaptiveRedundancy.parityShards(dataShards: 10, lossRate: 0.08))
        #expect(atThreshold > 0)
        #expect(
            try AdaptiveRedundancy.decide(dataShards: 10, lossRate: 0.08, ultrafastLink: false)
                == .reedSolomon(dataShards: 10, parityShards: atThreshold))
        #expect(try AdaptiveRedundancy.decide(dataShards: 10, lossRate: 0.0801, ultrafastLink: false) == .fountain)
        #expect(try AdaptiveRedundancy.decide(dataShards: 10, lossRate: 0.5, ultrafastLink: false) == .fountain)
        #expect(
            try AdaptiveRedundancy.decide(dataShards: 10, lossRate: 0.05, ultrafastLink: false)
                == .reedSolomon(dataShards: 10, parityShards: 7))
        #expect(try AdaptiveRedundancy.decide(dataShards: 10, lossRate: 0, ultrafastLink: false) == .none)
    }

    @Test(arguments: [
        (0, 0.1, 1e-6), (10, -0.1, 1e-6), (10, 1.5, 1e-6), (10, .nan, 1e-6), (10, 0.1, 0.0), (10, 0.1, 1),
    ])
    func badInputsAreTypedErrors(k: Int, p: Double, target: Double) {
        #expect {
            try AdaptiveRedundancy.parityShards(dataShards: k, lossRate: p, targetFailureProbability: target)
        } throws: { error in
            (error as? CodingError)?.code == .invalidParameters
        }
    }
}

@Suite struct UnequalErrorProtectionTests {
    @Test func theTableHasSixLevelsWithStricterTargetsAndFloorsForHigherPriority() {
        #expect(DataPriority.allCases.count == 6)
        #expect(DataPriority.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5])
        #expect(DataPriority.allCases.map(\.targetFailureProbability) == [1e-9, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3])
        #expect(DataPriority.allCases.map(\.minimumParityRatio) == [0.5, 0.25, 0.125, 0, 0, 0])
        #expect(DataPriority.critical < .background)
    }

    static func parity(_ decision: RedundancyDecision) -> Int {
        if case .reedSolomon(_, let m) = decision { return m }
        return 0
    }

    @Test(arguments: [0.0, 0.001, 0.01, 0.03, 0.05, 0.08])
    func higherPriorityNeverGetsLessParity(lossRate: Double) throws {
        let counts = try DataPriority.allCases.map { priority in
            Self.parity(
                try UnequalErrorProtection.decide(
                    priority: priority, dataShards: 16, lossRate: lossRate, ultrafastLink: false))
        }
        for (higher, lower) in zip(counts, counts.dropFirst()) { #expect(higher >= lower, "\(counts)") }
        #expect(counts[0] > counts[5], "\(counts)")
    }

    @Test func knownRowsOfTheMapping() throws {
        // k = 10 at 5% loss: critical takes the binomial 10 (target 1e-9), background the binomial 4 (1e-3).
        #expect(
            try UnequalErrorProtection.decide(priority: .critical, dataShards: 10, lossRate: 0.05, ultrafastLink: false)
                == .reedSolomon(dataShards: 10, parityShards: 10))
        #expect(
            try UnequalErrorProtection.decide(
                priority: .background, dataShards: 10, lossRate: 0.05, ultrafastLink: false)
                == .reedSolomon(dataShards: 10, parityShards: 4))
        // On a clean link the floors still apply: critical ceil(10 x 0.5) = 5, elevated ceil(1.25) = 2.
        #expect(
            try UnequalErrorProtection.decide(priority: .critical, dataShards: 10, lossRate: 0, ultrafastLink: false)
                == .reedSolomon(dataShards: 10, parityShards: 5))
        #expect(
            try UnequalErrorProtection.decide(priority: .elevated, dataShards: 10, lossRate: 0, ultrafastLink: false)
                == .reedSolomon(dataShards: 10, parityShards: 2))
        #expect(
            try UnequalErrorProtection.decide(priority: .normal, dataShards: 10, lossRate: 0, ultrafastLink: false)
                == .none)
    }

    @Test func linkPolicyOverridesPriority() throws {
        for priority in DataPriority.allCases {
            #expect(
                try UnequalErrorProtection.decide(
                    priority: priority, dataShards: 10, lossRate: 0.02, ultrafastLink: true)
                    == .none)
            #expect(
                try UnequalErrorProtection.decide(
                    priority: priority, dataShards: 10, lossRate: 0.09, ultrafastLink: false)
                    == .fountain)
        }
    }
}
