import AetherIO
import AetherTestSupport
import Testing

@testable import AetherUploader

@Suite struct SavitzkyGolayTests {
    static func close(_ a: [Double], _ b: [Double]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) < 1e-12 }
    }

    @Test func theDerivedCoefficientsMatchTheClassicTables() throws {
        // Savitzky & Golay 1964, Table I (quadratic/cubic smoothing): 7 points (-2 3 6 7 6 3 -2)/21, 5 points
        // (-3 12 17 12 -3)/35.
        let seven = try SavitzkyGolay(window: 7, order: 2, position: 0).coefficients
        #expect(Self.close(seven, [-2, 3, 6, 7, 6, 3, -2].map { $0 / 21 }))
        let five = try SavitzkyGolay(window: 5, order: 2, position: 0).coefficients
        #expect(Self.close(five, [-3, 12, 17, 12, -3].map { $0 / 35 }))
        // Read at the newest point, worked by hand from the normal equations (sum x^2 = 28, sum x^4 = 196):
        // c_k = (-56 + 63 x_k + 35 x_k^2) / 588 = (5 -3 -6 -4 3 15 32)/42.
        #expect(Self.close(SavitzkyGolay.display.coefficients, [5, -3, -6, -4, 3, 15, 32].map { $0 / 42 }))
    }

    static func quadratic(_ x: Double) -> Double { 0.5 - 0.25 * x + 0.125 * x * x }

    @Test func aQuadraticPassesThroughUnchanged() throws {
        for position in -3...3 {
            let filter = try SavitzkyGolay(window: 7, order: 2, position: position)
            let samples: [Double] = (-3...3).map { Self.quadratic(Double($0)) }
            let expected = Self.quadratic(Double(position))
            #expect(abs((filter.apply(samples) ?? .nan) - expected) < 1e-12)
            #expect(filter.apply(samples.dropLast()) == nil)
        }
    }

    @Test(arguments: [(6, 2, 0), (7, 7, 0), (1, 0, 0), (7, 2, 4), (7, -1, 0)])
    func aShapeThatIsNoFilterIsATypedError(_ shape: (Int, Int, Int)) {
        #expect(throws: UploaderError.self) {
            try SavitzkyGolay(window: shape.0, order: shape.1, position: shape.2)
        }
    }
}

@Suite struct ProgressLayersTests {
    @Test func theDisplayIsTheSmoothedAcknowledgedShareWorkedByHand() {
        let clock = ManualClock()
        let tracker = ProgressLayers(totalBytes: 100, clock: clock)
        let acknowledged: [UInt64] = [10, 12, 12, 15, 16, 18, 22]
        var previous: UInt64 = 0
        var shown: [Double] = []
        for value in acknowledged {
            tracker.acknowledged(value - previous, merkleVerified: true)
            previous = value
            shown.append(tracker.sample().displayedFraction)
            clock.advance(by: .milliseconds(100))
        }
        // Fewer than 7 samples: the raw share.
        #expect(shown.prefix(6) == [0.10, 0.12, 0.12, 0.15, 0.16, 0.18])
        // (5*10 - 3*12 - 6*12 - 4*15 + 3*16 + 15*18 + 32*22) / 42 / 100 = 904 / 4200.
        #expect(abs(shown[6] - 904.0 / 4200.0) < 1e-12)
    }

    @Test func theDisplayNeverGoesBackNorPassesTheAcknowledgedShare() {
        var generator = SplitMix64(seed: 7)
        let clock = ManualClock()
        let total: UInt64 = 1_000_000
        let tracker = ProgressLayers(totalBytes: total, clock: clock)
        var last = 0.0
        var acknowledged: UInt64 = 0
        var steps = 0
        while acknowledged < total {
            // Bursts and stalls: the smoothed value overshoots and dips.
            let bursts = UInt64.random(in: 0...3, using: &generator) == 0
            let burst = bursts ? UInt64.random(in: 0...60_000, using: &generator) : 0
            let step = min(total - acknowledged, burst)
            tracker.acknowledged(step, merkleVerified: true)
            acknowledged += step
            let shown = tracker.sample().displayedFraction
            #expect(shown >= last)
            #expect(shown <= Double(acknowledged) / Double(total) || shown == 1)
            last = shown
            clock.advance(by: .milliseconds(100))
            steps += 1
        }
        #expect(steps > 20)
        #expect(tracker.sample().displayedFraction == 1)
    }

    @Test func theLastFivePercentSlowDownAndOneNeedsVerification() {
        let clock = ManualClock()
        let tracker = ProgressLayers(totalBytes: 1000, clock: clock)
        func hold(_ count: Int) -> Double {
            var shown = 0.0
            for _ in 0..<count {
                shown = tracker.sample().displayedFraction
                clock.advance(by: .milliseconds(100))
            }
            return shown
        }
        tracker.acknowledged(900, merkleVerified: true)
        #expect(abs(hold(7) - 0.9) < 1e-12)
        tracker.acknowledged(75, merkleVerified: true)
        // u = 0.5: 0.95 + 0.05 * (0.5 - 0.125).
        #expect(abs(hold(7) - 0.96875) < 1e-12)
        tracker.acknowledged(25, merkleVerified: false)
        #expect(abs(hold(7) - 0.975) < 1e-12)
        tracker.merkleVerified(25)
        #expect(tracker.sample().displayedFraction == 1)
        #expect(ProgressStateMachine.decelerated(0.95) == 0.95)
        #expect(ProgressStateMachine.decelerated(0.5) == 0.5)
    }

    @Test func theWireAckValveOpensAboveEightPercentAndCloses() {
        let tracker = ProgressLayers(totalBytes: 1000, clock: ManualClock())
        #expect(tracker.wireSent(80) == [])
        let opened = tracker.wireSent(1)
        #expect(opened.count == 1)
        guard case .wireAckDivergence(let share) = opened.first else {
            Issue.record("the valve did not open")
            return
        }
        #expect(abs(share - 0.081) < 1e-12)
        #expect(tracker.snapshot.wireAckDivergent)
        #expect(tracker.wireSent(10) == [])
        #expect(tracker.acknowledged(11, merkleVerified: true) == [.wireAckConverged])
        #expect(!tracker.snapshot.wireAckDivergent)
        // wire 191, acknowledged 11: a gap of 18%.
        #expect(tracker.wireSent(100) == [.wireAckDivergence(share: 0.18)])
        #expect(tracker.wireFailed(50) == [])
        #expect(tracker.wireFailed(60) == [.wireAckConverged])
        #expect(tracker.snapshot.wire == 81)
    }

    @Test func theAckMerkleValveOpensOnAnyUnverifiedByte() {
        let tracker = ProgressLayers(totalBytes: 1000, clock: ManualClock())
        tracker.wireSent(20)
        #expect(tracker.acknowledged(10, merkleVerified: true) == [])
        #expect(tracker.acknowledged(1, merkleVerified: false) == [.ackMerkleDivergence(unverifiedBytes: 1)])
        #expect(tracker.snapshot.ackMerkleDivergent)
        #expect(tracker.merkleVerified(1) == [.ackMerkleConverged])
        #expect(tracker.snapshot.merkleVerified == 11)
        // Verification never runs ahead of acknowledgement.
        tracker.merkleVerified(500)
        #expect(tracker.snapshot.merkleVerified == 11)
    }

    @Test func rateAndTimeRemainingComeFromTheWindow() {
        let clock = ManualClock()
        let tracker = ProgressLayers(totalBytes: 1000, clock: clock)
        #expect(tracker.sample().bytesPerSecond == nil)
        for _ in 0..<2 {
            clock.advance(by: .seconds(1))
            tracker.acknowledged(100, merkleVerified: true)
        }
        let snapshot = tracker.sample()
        #expect(snapshot.bytesPerSecond == 100)
        #expect(snapshot.secondsRemaining == 8)
        tracker.serverReconstructed(64)
        #expect(tracker.snapshot.serverReconstructed == 64)
    }

    @Test func anEmptyUploadIsDoneAndAGrowingOneNeverGoesBack() {
        let clock = ManualClock()
        #expect(ProgressLayers(totalBytes: 0, clock: clock).sample().displayedFraction == 1)
        let growing = ProgressLayers(totalBytes: 100, clock: clock)
        growing.acknowledged(50, merkleVerified: true)
        #expect(growing.sample().displayedFraction == 0.5)
        growing.setTotalBytes(200)
        #expect(growing.sample().displayedFraction == 0.5)
        growing.setTotalBytes(50)
        #expect(growing.snapshot.totalBytes == 200)
    }
}
