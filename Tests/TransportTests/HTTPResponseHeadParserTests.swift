import Testing

@testable import AetherTransport

@Suite struct HTTPResponseHeadParserTests {
    func feed(_ lines: [String], limit: Int = 1 << 16) -> (HTTPResponseHeadParser, [HTTPResponseHeadParser.Outcome]) {
        var parser = HTTPResponseHeadParser(limit: limit)
        let outcomes = lines.map { parser.consume(line: Array("\($0)\r\n".utf8)) }
        return (parser, outcomes)
    }

    @Test func informationalBlocksAreKeptInOrderBeforeTheFinalResponse() {
        let (parser, outcomes) = feed([
            "HTTP/1.1 104 Upload Resumption Supported", "Upload-Draft-Interop-Version: 6", "Location: /u/1", "",
            "HTTP/1.1 100 Continue", "",
            "HTTP/1.1 201 Created", "Location: /u/1", "Upload-Offset:   42  ", "",
        ])
        #expect(outcomes.allSatisfy { $0 == .accepted })
        #expect(parser.informational.map(\.status) == [104, 100])
        #expect(parser.informational[0].headers["location"] == "/u/1")
        #expect(parser.informational[0].headers["UPLOAD-DRAFT-INTEROP-VERSION"] == "6")
        #expect(parser.head?.status == 201)
        #expect(parser.head?.headers["Upload-Offset"] == "42")
        #expect(parser.head?.headers.count == 2)
    }

    /// 1xx answers sent again and again are a server that never answers: the 33rd is refused, far below the
    /// byte limit (a 100 Continue is 25 bytes: 64 KiB would take 2,600 of them, each allowed to trickle).
    @Test func moreThanThirtyTwoInformationalAnswersAreRefused() {
        let lines = Array(repeating: ["HTTP/1.1 100 Continue", ""], count: 33).flatMap { $0 }
        let (parser, outcomes) = feed(lines)
        #expect(outcomes.dropLast().allSatisfy { $0 == .accepted })
        #expect(outcomes.last == .tooManyInformational)
        #expect(parser.informational.count == HTTPResponseHeadParser.maximumInformational)
        let (ok, okOutcomes) = feed(Array(lines.dropLast(2)) + ["HTTP/1.1 200 OK", ""])
        #expect(okOutcomes.allSatisfy { $0 == .accepted })
        #expect(ok.head?.status == 200)
    }

    @Test func theHeadIsIncompleteUntilTheFinalBlockEnds() {
        let (parser, _) = feed(["HTTP/2 200", "content-length: 0"])
        #expect(parser.head == nil)
        let (ended, _) = feed(["HTTP/2 200", "content-length: 0", ""])
        #expect(ended.head?.status == 200)
    }

    @Test func linesAfterTheFinalBlockAreTrailersAndIgnored() {
        let (parser, outcomes) = feed(["HTTP/1.1 200 OK", "A: 1", "", "Trailer-Field: x", ""])
        #expect(outcomes.allSatisfy { $0 == .accepted })
        #expect(parser.head?.headers.count == 1)
    }

    @Test func obsoleteLineFoldingJoinsTheValueWithOneSpace() {
        let (parser, _) = feed(["HTTP/1.1 200 OK", "X-Long: first", "\t second", "Y: 2", ""])
        #expect(parser.head?.headers["X-Long"] == "first second")
        #expect(parser.head?.headers.fields.map(\.name) == ["X-Long", "Y"])
    }

    @Test func repeatedFieldsKeepEveryValue() {
        let (parser, _) = feed(["HTTP/1.1 200 OK", "Set: a", "set: b", ""])
        #expect(parser.head?.headers.values("SET") == ["a", "b"])
    }

    @Test(arguments: [
        ["A: 1"],  // a field before any status line
        ["HTTP/1.1 200 OK", "no colon here"],
        ["HTTP/1.1 200 OK", ": empty name"],
        ["HTTP/1.1 200 OK", "Bad Name: x"],
        ["HTTP/1.1 20 OK"],
        ["HTTP/1.1 600 Nope"],
        ["HTTP/1.1"],
        ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"],
        [""],
        ["HTTP/1.1 200 OK", " folded first"],
    ])
    func malformedLinesAreRefused(lines: [String]) {
        let (_, outcomes) = feed(lines)
        #expect(outcomes.contains { if case .malformed = $0 { true } else { false } })
    }

    @Test func theByteLimitCountsEveryBlockAndStopsAtTheFirstLineOverIt() {
        // "HTTP/1.1 103 Early Hints\r\n" is 26 bytes, "\r\n" 2, "HTTP/1.1 200 OK\r\n" 17, "A: 1\r\n" 6.
        let lines = ["HTTP/1.1 103 Early Hints", "", "HTTP/1.1 200 OK", "A: 1", ""]
        let (fits, fitting) = feed(lines, limit: 53)
        #expect(fitting.allSatisfy { $0 == .accepted })
        #expect(fits.head?.status == 200)
        let (_, over) = feed(lines, limit: 52)
        #expect(over.last == .tooLarge)
        #expect(over.dropLast().allSatisfy { $0 == .accepted })
    }

    @Test func bytesThatAreNotUTF8AreReadAsLatin1() {
        var parser = HTTPResponseHeadParser(limit: 1024)
        _ = parser.consume(line: Array("HTTP/1.1 200 OK\r\n".utf8))
        _ = parser.consume(line: Array("X: caf".utf8) + [0xE9, 0x0D, 0x0A])
        _ = parser.consume(line: [0x0D, 0x0A])
        #expect(parser.head?.headers["X"] == "caf\u{E9}")
    }
}
