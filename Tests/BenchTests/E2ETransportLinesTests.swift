import Testing

@testable import aether_bench

/// The transport line of `aether-bench e2e` (`lab-transport`): its cells measure what they say, and a run stopped at
/// the cap is credited with what its `--json` events said was acknowledged.
@Suite struct E2ETransportLinesTests {
    @Test func theAcknowledgedBytesAreTheLastProgressEventsAndZeroBeforeAny() {
        let lines = """
            {"event":"tier","id":"u","tier":"NORMAL"}
            {"acknowledged":1048576,"event":"progress","id":"u","sent":2097152,"total":33554432}
            {"event":"retry","id":"u","reason":"connection reset"}
            {"acknowledged":3145728,"event":"progress","id":"u","sent":4194304,"total":33554432}
            {"event":"request","id":"u","index":3,"parts":1,"request_size":1048576}
            {"acknowledged":99,"event":"progr
            """
        #expect(E2ETransportLines.acknowledgedBytes(jsonLines: lines) == 3_145_728)
        #expect(E2ETransportLines.acknowledgedBytes(jsonLines: #"{"event":"tier"}"#) == 0)
        #expect(E2ETransportLines.acknowledgedBytes(jsonLines: "") == 0)
    }

    @Test func everyCellNamesItsCongestionControlAndTheSweepsCoverTheTableOfTheIssue() {
        let cells = E2ETransportLines.conditions.flatMap { condition in condition.cells.map { (condition, $0) } }
        for (_, cell) in cells {
            let index = cell.options.firstIndex(of: "--congestion")
            let control = index.map { cell.options[$0 + 1] }
            #expect(control.map { cell.label.hasPrefix($0) } == true, "\(cell.label): \(cell.options)")
        }
        let loss3 = cells.filter { $0.0.loss == 0.03 }.map(\.1.options)
        for n in ["1", "2", "4", "8"] {
            #expect(loss3.contains(["--congestion", "cubic", "--parallel", n]), "\(n) connections under CUBIC")
        }
        let sizes = cells.filter { $0.0.pathChanges != nil }.compactMap { cell in
            cell.1.options.firstIndex(of: "--chunk-size").map { cell.1.options[$0 + 1] }
        }
        #expect(sizes == ["1M", "4M", "16M"])
        #expect(Set(E2ETransportLines.conditions.map(\.loss)) == [0.01, 0.03])
    }
}
