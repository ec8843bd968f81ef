import Testing

@testable import aether_bench

/// The options `aether-bench e2e` takes: `--lines`, `--size-mib`, `--link-mib`.
@Suite struct E2EOptionsTests {
    @Test func theE2EOptionsParseWithTheirValues() throws {
        let request = try BenchArguments.parse(
            ["e2e", "--lines", "badlink,mobile", "--link-mib", "8", "--size-mib", "64"], known: ["io", "e2e"])
        #expect(
            request
                == .run(suites: ["e2e"], options: ["--lines", "badlink,mobile", "--link-mib", "8", "--size-mib", "64"]))
    }

    @Test(arguments: [["e2e", "--lines"], ["e2e", "--link-mib"], ["e2e", "--link-mib", "--lines", "s3"]])
    func anE2EOptionWithoutItsValueIsAUsageError(arguments: [String]) {
        #expect(throws: BenchArguments.UsageError.self) { try BenchArguments.parse(arguments, known: ["e2e"]) }
    }

    @Test func theUsageSaysWhichLinesNeedRoot() {
        let usage = BenchArguments.usage(suites: [("e2e", false, E2EBench.summary)])
        #expect(usage.contains("--link-mib N"))
        #expect(usage.contains("--lines LIST"))
        #expect(usage.contains("e2e needs root for its badlink and mobile lines"))
    }

    @Test(arguments: [("1", 1), ("64", 64), ("65536", 65536)])
    func aSizeInMebibytesIsAWholeNumberInRange(text: String, value: Int) throws {
        #expect(try E2EBench.mebibytes(text, default: 7) == value)
    }

    @Test(arguments: ["0", "-1", "65537", "1.5", "lots", ""])
    func aSizeOutsideTheRangeIsAnError(text: String) {
        #expect(throws: BenchError.self) { try E2EBench.mebibytes(text, default: 7) }
    }

    @Test func noSizeMeansTheDefault() throws {
        #expect(try E2EBench.mebibytes(nil, default: 64) == 64)
    }

    @Test(arguments: [["s3"], ["badlink", "mobile"], ["mobile", "s3", "badlink"]])
    func theLinesOptionNamesKnownLines(names: [String]) throws {
        #expect(try E2EBench.lines(names.joined(separator: ",")) == names)
    }

    @Test(arguments: ["", "s3,", "wifi", "s3,bogus"])
    func anUnknownLineIsAnError(text: String) {
        #expect(throws: BenchError.self) { try E2EBench.lines(text) }
    }

    @Test func noLinesOptionRunsEveryLine() throws {
        #expect(
            try E2EBench.lines(nil) == [
                "s3", "badlink", "mobile", "lab-mobile", "lab-steady", "lab-transport", "lab-capture",
            ])
    }
}
