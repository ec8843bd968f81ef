import AetherScheduling
import Testing

@Suite struct LinkPlannerTests {
    /// A decision of `streams` requests of `chunk` bytes at `mbps` (pessimistic half that).
    static func decision(mbps: Double, chunk: Int = 16 << 20, streams: Int = 8) -> SchedulingDecision {
        var machine = FusionSchedulerStateMachine()
        for second in 0..<30 {
            machine.record(BandwidthMeasurement(bitsPerSecond: mbps * 1e6, duration: 1, timestamp: Double(second)))
        }
        let made = machine.decide(SchedulingContext(parallelismCap: streams))
        return made
    }

    static let native = LinkPlanner.Keeping(unitBytes: 1 << 20, keepsPrefix: true)
    static let s3 = LinkPlanner.Keeping(unitBytes: 5 << 20, keepsPrefix: false)

    @Test func withoutInterruptionsTheDecisionStands() {
        let decision = Self.decision(mbps: 20)
        let plan = LinkPlanner.plan(decision, keeping: Self.native, roundTripTime: 0.08, interruptions: nil)
        #expect(plan.streams == decision.parallelism)
        #expect(plan.requestBytes == decision.chunkSizeBytes / (1 << 20) * (1 << 20))
        #expect(!plan.holdsBack)
        #expect(plan.budgetBytes == nil)
    }

    @Test func inFlightNeverExceedsWhatArrivesBeforeTheNextInterruption() throws {
        // 20 Mbit/s, regular cuts every 10 s, 2 s since the last: 8 s left, 2.5 MB/s at the predicted rate.
        let decision = Self.decision(mbps: 20)
        let forecast = InterruptionForecast(meanInterval: 10, sinceLast: 2, regular: true)
        let plan = LinkPlanner.plan(decision, keeping: Self.native, roundTripTime: 0.08, interruptions: forecast)
        let budget = try #require(plan.budgetBytes)
        let rate = decision.predictedBitsPerSecond / 8
        #expect(budget == Int(rate * (8 - 0.08)))
        #expect(plan.streams * plan.requestBytes <= max(budget, 1 << 20))
        #expect(plan.requestBytes % (1 << 20) == 0)
    }

    @Test func aSlowLinkGetsFewerStreamsSoEachMovesAWholeUnit() {
        // 1 Mbit/s, a cut every 20 s: 125 kB/s x 20 s = 2.5 MB, two 1 MiB units at most.
        let decision = Self.decision(mbps: 1)
        let forecast = InterruptionForecast(meanInterval: 20, sinceLast: 0, regular: false)
        let plan = LinkPlanner.plan(decision, keeping: Self.native, roundTripTime: 0.08, interruptions: forecast)
        #expect(plan.streams >= 1)
        #expect(plan.streams <= 2)
        #expect(plan.requestBytes == 1 << 20)
    }

    @Test func aPartLostWholeIsNotStartedBeforeADueInterruptionButIsRightAfterOne() {
        // 8 Mbit/s: a 5 MiB part takes ~5.3 s; regular cuts every 20 s.
        let decision = Self.decision(mbps: 8)
        let due = InterruptionForecast(meanInterval: 20, sinceLast: 17, regular: true)
        #expect(LinkPlanner.plan(decision, keeping: Self.s3, roundTripTime: 0.08, interruptions: due).holdsBack)
        let after = InterruptionForecast(meanInterval: 20, sinceLast: 1.5, regular: true)
        #expect(!LinkPlanner.plan(decision, keeping: Self.s3, roundTripTime: 0.08, interruptions: after).holdsBack)
        // A late interruption may come at any moment, yet waiting for it would stop the upload.
        let late = InterruptionForecast(meanInterval: 20, sinceLast: 21, regular: true)
        #expect(!LinkPlanner.plan(decision, keeping: Self.s3, roundTripTime: 0.08, interruptions: late).holdsBack)
        // Irregular interruptions give no time to wait for.
        let poisson = InterruptionForecast(meanInterval: 20, sinceLast: 17, regular: false)
        #expect(!LinkPlanner.plan(decision, keeping: Self.s3, roundTripTime: 0.08, interruptions: poisson).holdsBack)
        // A protocol that keeps the prefix never holds back.
        #expect(!LinkPlanner.plan(decision, keeping: Self.native, roundTripTime: 0.08, interruptions: due).holdsBack)
    }

    @Test func aPartLostWholeGetsASecondStreamWhereRegularInterruptionsLeaveRoomForTwo() {
        // The scheduler chose one stream (a part's answer costs it nothing in its model); at 20 Mbit/s, 1.5 s into a
        // 20 s period, two 5 MiB parts finish long before the next cut: a second stream, no more.
        let one = Self.decision(mbps: 20, streams: 1)
        #expect(one.parallelism == 1)
        let early = InterruptionForecast(meanInterval: 20, sinceLast: 1.5, regular: true)
        #expect(LinkPlanner.plan(one, keeping: Self.s3, roundTripTime: 0.08, interruptions: early).streams == 2)
        // Irregular interruptions: the scheduler's own pricing of a cut stands.
        let poisson = InterruptionForecast(meanInterval: 20, sinceLast: 1.5, regular: false)
        #expect(LinkPlanner.plan(one, keeping: Self.s3, roundTripTime: 0.08, interruptions: poisson).streams == 1)
        // A protocol that keeps a cut request's prefix is not concerned.
        #expect(LinkPlanner.plan(one, keeping: Self.native, roundTripTime: 0.08, interruptions: early).streams == 1)
        // At 3 Mbit/s the budget carries one part: rule 2 keeps one stream.
        let slow = Self.decision(mbps: 3, streams: 1)
        #expect(LinkPlanner.plan(slow, keeping: Self.s3, roundTripTime: 0.08, interruptions: early).streams == 1)
    }

    @Test func whenNoIntervalCarriesAPartWaitingGainsNothing() {
        // 1 Mbit/s: a 5 MiB part takes 42 s, more than the 10 s between cuts.
        let decision = Self.decision(mbps: 1)
        let due = InterruptionForecast(meanInterval: 10, sinceLast: 8, regular: true)
        #expect(!LinkPlanner.plan(decision, keeping: Self.s3, roundTripTime: 0.08, interruptions: due).holdsBack)
    }

    @Test func regularInterruptionsAreToldFromIrregularOnes() throws {
        var history = InterruptionHistory()
        for time in [20.0, 40.2, 59.9, 80.1] { history.note(at: time) }
        let regular = try #require(history.forecast(at: 85))
        #expect(regular.regular)
        #expect(abs(regular.meanInterval - 20.03) < 0.01)
        #expect(abs(regular.horizon - (20.03 - 4.9)) < 0.01)

        var scattered = InterruptionHistory()
        for time in [5.0, 40, 47, 90] { scattered.note(at: time) }
        let irregular = try #require(scattered.forecast(at: 95))
        #expect(!irregular.regular)
        #expect(irregular.horizon == irregular.meanInterval)
    }

    @Test func failuresInOneBurstAreOneInterruptionAndOldOnesAgeOut() {
        var history = InterruptionHistory(burstGap: 2, window: 300)
        for time in [10.0, 10.5, 11.9, 13.5] { history.note(at: time) }
        #expect(history.starts == [10])
        history.note(at: 400)
        #expect(history.starts == [400])
        #expect(history.forecast(at: 401)?.sinceLast == 1)
        #expect(InterruptionHistory().forecast(at: 10) == nil)
    }

    @Test func aLateRegularInterruptionKeepsAQuarterPeriodHorizon() {
        let late = InterruptionForecast(meanInterval: 20, sinceLast: 30, regular: true)
        #expect(late.horizon == 5)
        #expect(!late.isDue(within: 100))
    }
}
