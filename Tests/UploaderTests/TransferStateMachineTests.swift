import AetherIO
import AetherScheduling
import AetherTransport
import Testing

@testable import AetherUploader

/// The transfer's bookkeeping without an upload: events in, actions out.
@Suite struct TransferStateMachineTests {
    static let partSize: Int64 = 1 << 20

    static func machine(destinationChecksParts: Bool = false, parallel: Int = 2) throws -> TransferStateMachine {
        let fixture = try UploadFixture(bytes: [1, 2, 3])
        defer { fixture.clean() }
        let snapshot = ResumeSnapshot(
            filePath: Array(fixture.file.utf8), destination: "memory://dest", mode: .native, endpoint: nil,
            fingerprint: .init(try FileFingerprint(path: fixture.file)),
            remote: RemoteUpload(location: "memory://upload/1", uploadID: nil, size: 4 * partSize, partSize: partSize),
            partSize: partSize, partCount: 4, chainSessionID: "abc", createdAt: 1)
        return TransferStateMachine(
            snapshot: snapshot, acknowledged: [:], counters: Counters(total: 4 * partSize, reused: 0),
            decision: .init(tier: .normal, parallel: parallel, runParts: 1),
            destinationChecksParts: destinationChecksParts)
    }

    static func sent(_ index: Int, crc: UInt32 = 7, theirs: UInt32? = 7, seconds: Double = 1, measured: Int64? = nil)
        -> SentPart
    {
        SentPart(
            receipt: PartReceipt(index: index, length: partSize, checksumCRC32C: theirs),
            sha256: SHA256.hash([UInt8(index)]), crc32c: crc, seconds: seconds, bytesOnWire: partSize, attempts: 2,
            measuredBytes: measured)
    }

    @Test func requestsStartWhileFewerThanTheDecidedStreamsAreInFlight() throws {
        var machine = try Self.machine(parallel: 2)
        #expect(machine.mayStartRequest)
        machine.requestStarted(bytes: 100)
        machine.requestStarted(bytes: 50)
        #expect(!machine.mayStartRequest)
        #expect(machine.inFlightBytes == 150)
        machine.requestEnded(bytes: 100)
        #expect(machine.mayStartRequest)
        #expect(machine.inFlight == 1)
        #expect(machine.inFlightBytes == 50)
    }

    /// An acknowledgement enters the snapshot and the counters; it is verified when the destination's CRC32C is the
    /// part's or the destination checks parts itself; the link's rate counts every byte acknowledged within the
    /// part's send time, and a run's later parts (measured 0) add no measurement.
    @Test func anAcknowledgementIsCountedVerifiedAndMeasuredOverItsSendTime() throws {
        var machine = try Self.machine()
        machine.partRead(length: Self.partSize)
        let first = machine.partAcknowledged(Self.sent(0, seconds: 1), now: 10)
        #expect(machine.holds(0))
        #expect(machine.snapshot.acknowledged[0]?.sha256 == SHA256.hash([0]).hex)
        #expect(machine.counters.sent == Self.partSize)
        #expect(machine.counters.acknowledged == Self.partSize)
        #expect(machine.counters.verified == Self.partSize)
        #expect(machine.counters.runBytes == Self.partSize)
        #expect(machine.attempts == 2)
        guard case .trackAcknowledged(let bytes, true) = first.first, case .measure(let measured, 1, 10) = first.last
        else {
            Issue.record("\(first)")
            return
        }
        #expect(bytes == Self.partSize)
        #expect(measured == Self.partSize)
        // Half a second later, a part sent over 2 s: both acknowledgements fall in its window. Its CRC32C differs
        // from the destination's answer: not verified.
        let second = machine.partAcknowledged(Self.sent(1, crc: 8, seconds: 2), now: 10.5)
        guard case .trackAcknowledged(_, false) = second.first, case .measure(let both, 2, 10.5) = second.last else {
            Issue.record("\(second)")
            return
        }
        #expect(both == 2 * Self.partSize)
        #expect(machine.counters.verified == Self.partSize)
        let later = machine.partAcknowledged(Self.sent(2, measured: 0), now: 11)
        #expect(later.count == 1)
        // A destination that checks every part: verified whatever its answer says.
        var checking = try Self.machine(destinationChecksParts: true)
        _ = checking.partAcknowledged(Self.sent(0, crc: 1, theirs: nil), now: 1)
        #expect(checking.counters.verified == Self.partSize)
    }

    /// After the decision: the stream limit when a plan was applied, the run length, the snapshot unless a run
    /// saves it once at its end, a tier event only when the decision changed, then the audit, the acknowledgement
    /// and the progress.
    @Test func theDecisionLimitsStreamsAndAnnouncesOnlyAChange() throws {
        var machine = try Self.machine(parallel: 2)
        let receipt = Self.sent(0).receipt
        _ = machine.partAcknowledged(Self.sent(0), now: 1)
        let same = machine.settled(
            receipt, next: machine.decision, planned: false, predictedBitsPerSecond: 0, save: true)
        #expect(Self.names(same) == ["setRunParts 1", "saveSnapshot", "audit 0", "chunkAcknowledged 0", "progress"])
        var next = machine.decision
        next.parallel = 4
        next.runParts = 3
        next.resourceLevel = .moderate
        let changed = machine.settled(receipt, next: next, planned: true, predictedBitsPerSecond: 8e6, save: false)
        #expect(
            Self.names(changed) == [
                "limitStreams 4", "setRunParts 3", "tierChanged 4 3145728 moderate", "audit 0", "chunkAcknowledged 0",
                "progress",
            ])
        #expect(machine.decision == next)
        #expect(machine.tierReport(predictedBitsPerSecond: 8e6).predictedBitsPerSecond == 8e6)
        machine.parityAcknowledged(bytesOnWire: 10)
        #expect(machine.parityShardsSent == 1)
        #expect(machine.counters.runBytes == Self.partSize + 10)
    }

    static func names(_ actions: [TransferStateMachine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .trackAcknowledged(let bytes, let verified): "track \(bytes) \(verified)"
            case .measure(let bytes, let seconds, _): "measure \(bytes) \(seconds)"
            case .limitStreams(let streams): "limitStreams \(streams)"
            case .setRunParts(let parts): "setRunParts \(parts)"
            case .saveSnapshot: "saveSnapshot"
            case .auditAcknowledged(let index): "audit \(index)"
            case .emit(.tierChanged(let report)):
                "tierChanged \(report.parallelism) \(report.requestSize) \(report.resourceLevel)"
            case .emit(.chunkAcknowledged(let receipt)): "chunkAcknowledged \(receipt.index)"
            case .emit(let event): "emit \(event)"
            case .emitProgress: "progress"
            }
        }
    }
}
