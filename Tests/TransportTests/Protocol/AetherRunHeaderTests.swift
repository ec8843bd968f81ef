import AetherIO
import Foundation
import Testing

@testable import AetherTransport

/// `Aether-Chunk` of a run and `Aether-Run-Receipt` (`docs/PROTOCOL.md` 3.2.1): round trips and refusals.
@Suite struct AetherRunHeaderTests {
    static let digests = (0..<3).map { SHA256.hash([UInt8($0)]) }

    @Test func aRunHeaderRoundTripsAndIsRecognisedAsARun() throws {
        let header = AetherRunHeader(
            length: 40, crc32c: [1, 0xDEAD_BEEF, 7], sha256: Self.digests, link: SHA256.hash([42]))
        let text = header.fieldValue
        #expect(text.hasPrefix("count=3, length=40, crc32c=(:AAAAAQ==: :3q2+7w==: :AAAABw==:), sha-256=("))
        #expect(try AetherRunHeader(parsing: text) == header)
        #expect(AetherRunHeader.isRun(text))
        let single = AetherChunkHeader(length: 1, crc32c: 1, sha256: Self.digests[0]).fieldValue
        #expect(!AetherRunHeader.isRun(single))
        // A single-chunk parser refuses a run (an old receiver answers 400 rather than storing it as one chunk).
        #expect(throws: AetherProtocolError.self) { try AetherChunkHeader(parsing: text) }
    }

    @Test(arguments: [
        "count=0, length=0, crc32c=(), sha-256=()",
        "count=2, length=4, crc32c=(:AAAAAQ==:), sha-256=(:AAAAAQ==: :AAAAAQ==:)",
        "count=1, length=4, crc32c=:AAAAAQ==:, sha-256=(:AAAAAQ==:)",
        "count=1, length=4, crc32c=(:AAAAAQ==:)",
        "count=1, length=4, crc32c=(:AAAAAQ==:), sha-256=(:AAAAAQ==:)",
        "count=1, length=4, crc32c=(1), sha-256=(:AAAAAQ==:)",
        "count=70000, length=4, crc32c=(), sha-256=()",
        "count=1, length=-1, crc32c=(:AAAAAQ==:), sha-256=(:AAAAAQ==:)",
        "count=1, length=4, extra=1, crc32c=(:AAAAAQ==:), sha-256=(:AAAAAQ==:)",
    ])
    func aDamagedRunHeaderIsRefused(_ text: String) {
        #expect(throws: AetherProtocolError.self) { try AetherRunHeader(parsing: text) }
    }

    @Test func aRunReceiptRoundTripsAndRefusesACountThatDisagrees() throws {
        let receipt = AetherRunReceiptHeader(index: 4, sha256: Array(Self.digests[0..<2]))
        #expect(try AetherRunReceiptHeader(parsing: receipt.fieldValue) == receipt)
        let empty = AetherRunReceiptHeader(index: 4, sha256: [])
        #expect(empty.fieldValue == "index=4, count=0, sha-256=()")
        #expect(try AetherRunReceiptHeader(parsing: empty.fieldValue) == empty)
        #expect(throws: AetherProtocolError.self) {
            try AetherRunReceiptHeader(parsing: receipt.fieldValue.replacingOccurrences(of: "count=2", with: "count=3"))
        }
    }

    @Test func capabilitiesCarryMaxRunOnlyWhenRunsAreTaken() throws {
        let plain = AetherCapabilities()
        #expect(!plain.fieldValue.contains("max-run"))
        #expect(try AetherCapabilities(parsing: plain.fieldValue).maximumRun == 1)
        let runs = AetherCapabilities(maximumRun: 32)
        #expect(runs.fieldValue.hasSuffix(", max-run=32, challenge-v=2, challenge-bytes=16777216"))
        #expect(try AetherCapabilities(parsing: runs.fieldValue).maximumRun == 32)
        #expect(throws: AetherProtocolError.self) {
            try AetherCapabilities(parsing: plain.fieldValue + ", max-run=0")
        }
    }
}
