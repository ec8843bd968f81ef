import Testing

@testable import AetherUploader

/// Which parts one request carries: k follows the scheduler's chunk size, a run never crosses an acknowledged part,
/// and the last run is short.
@Suite struct RunPlannerTests {
    static let mebibyte = 1 << 20
    /// (decided chunk size, part size, most parts per run, expected parts per request).
    static let cases: [(Int, Int, Int, Int)] = [
        (16 * mebibyte, mebibyte, 64, 16), (4 * mebibyte, mebibyte, 64, 4), (mebibyte, mebibyte, 64, 1),
        (mebibyte / 4, mebibyte, 64, 1), (0, mebibyte, 64, 1), (16 * mebibyte, mebibyte, 8, 8),
        (3 * mebibyte, mebibyte, 64, 3), (16 * mebibyte, mebibyte, 0, 1), (5 * mebibyte - 1, mebibyte, 64, 4),
    ]

    @Test(arguments: cases)
    func partsPerRequestFollowTheDecidedChunkSize(chunk: Int, part: Int, maximum: Int, expected: Int) {
        #expect(
            RunPlanner.partsPerRequest(chunkSizeBytes: chunk, partSize: Int64(part), maximum: maximum) == expected)
    }

    @Test func aRunNeverCrossesAnAcknowledgedPart() {
        let held: Set<Int> = [3, 4, 9]
        #expect(RunPlanner.run(from: 0, length: 8, partCount: 20, isAcknowledged: held.contains) == 0..<3)
        #expect(RunPlanner.run(from: 5, length: 8, partCount: 20, isAcknowledged: held.contains) == 5..<9)
        #expect(RunPlanner.run(from: 10, length: 4, partCount: 20, isAcknowledged: held.contains) == 10..<14)
        #expect(RunPlanner.run(from: 3, length: 4, partCount: 20, isAcknowledged: held.contains).isEmpty)
    }

    @Test func theLastRunIsShort() {
        #expect(RunPlanner.run(from: 16, length: 8, partCount: 19, isAcknowledged: { _ in false }) == 16..<19)
        #expect(RunPlanner.run(from: 18, length: 8, partCount: 19, isAcknowledged: { _ in false }) == 18..<19)
        #expect(RunPlanner.run(from: 19, length: 8, partCount: 19, isAcknowledged: { _ in false }).isEmpty)
        #expect(RunPlanner.run(from: 0, length: 1, partCount: 19, isAcknowledged: { _ in false }) == 0..<1)
    }

    @Test func theRunUnitIsSmallOnlyWhenTheUploadTakesRuns() {
        #expect(Int64(16 << 20).runUnit(takesRuns: true) == 1 << 20)
        #expect(Int64(16 << 20).runUnit(takesRuns: false) == 16 << 20)
        #expect(Int64(256 << 10).runUnit(takesRuns: true) == 256 << 10)
    }
}
