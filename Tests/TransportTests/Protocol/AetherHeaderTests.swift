import AetherIO
import Foundation
import Testing

@testable import AetherTransport

/// The native header fields (`docs/PROTOCOL.md` sections 2, 3.2, 3.4): byte-exact formatting, round trips and
/// every malformed case naming its member.
@Suite struct AetherHeaderTests {
    static let sha = SHA256.hash(Array("abc".utf8))
    static let link = SHA256.hash(Array("link".utf8))

    // MARK: Aether-Capabilities

    @Test func theCapabilitiesOfTheProtocolDocumentsExampleAreFormattedByteForByte() throws {
        let text =
            "v=1, min-chunk=262144, max-chunk=67108864, max-object=1099511627776, max-chunks=1048576, parallel=16, "
            + "parity=\"rs8\", encodings=\"zstd deflate\", possession, challenges, expires=86400, challenge-v=2, "
            + "challenge-bytes=16777216"
        #expect(AetherCapabilities().fieldValue == text)
        #expect(try AetherCapabilities(parsing: text) == AetherCapabilities())
        #expect(try AetherCapabilities(parsing: text).answersSpotChecks)
    }

    /// A receiver of before spot-check version 2 says `challenges` only: detected as one whose answers prove
    /// nothing, never read as one that speaks version 2.
    @Test func aReceiverWithoutChallengeVersion2IsDetected() throws {
        let old =
            "v=1, min-chunk=262144, max-chunk=67108864, max-object=1099511627776, max-chunks=1048576, parallel=16, "
            + "parity=\"rs8\", encodings=\"zstd deflate\", possession, challenges, expires=86400"
        let parsed = try AetherCapabilities(parsing: old)
        #expect(parsed.challenges && parsed.challengeVersion == nil && parsed.maximumChallengeBytes == nil)
        #expect(!parsed.answersSpotChecks)
        #expect(!(try AetherCapabilities(parsing: old + ", challenge-v=3, challenge-bytes=1")).answersSpotChecks)
        #expect(try AetherCapabilities(parsing: old + ", challenge-v=2, challenge-bytes=1").answersSpotChecks)
        #expect(
            !(try AetherCapabilities(
                parsing: old.replacingOccurrences(of: "challenges", with: "challenges=?0")
                    + ", challenge-v=2, challenge-bytes=1")).answersSpotChecks)
        for (extra, member) in [
            (", challenge-v=2", "challenge-bytes"), (", challenge-bytes=5", "challenge-bytes"),
            (", challenge-v=2, challenge-bytes=0", "challenge-bytes"),
            (", challenge-v=0, challenge-bytes=5", "challenge-v"),
        ] {
            let error = #expect(throws: AetherProtocolError.self) { try AetherCapabilities(parsing: old + extra) }
            #expect(error?.member == member, "\(extra)")
        }
    }

    @Test func falseBooleansAreWrittenAndEveryMemberRoundTrips() throws {
        let capabilities = AetherCapabilities(
            minimumChunkSize: 16384, maximumChunkSize: 1 << 20, maximumObjectSize: 5, maximumChunks: 7, parallel: 2,
            parityCodes: [], encodings: [.deflate], possession: false, challenges: false, expires: 0,
            challengeVersion: nil, maximumChallengeBytes: nil)
        #expect(
            capabilities.fieldValue
                == "v=1, min-chunk=16384, max-chunk=1048576, max-object=5, max-chunks=7, parallel=2, parity=\"\", "
                + "encodings=\"deflate\", possession=?0, challenges=?0, expires=0")
        #expect(try AetherCapabilities(parsing: capabilities.fieldValue) == capabilities)
    }

    @Test func unknownCapabilityMembersAndUnknownEncodingsAreIgnored() throws {
        let parsed = try AetherCapabilities(
            parsing: "v=1, min-chunk=1, max-chunk=2, max-object=3, max-chunks=4, parallel=5, future=?1, "
                + "encodings=\"br zstd\", expires=6, extra=(1 2)")
        #expect(parsed.encodings == [.zstd])
        #expect(parsed.possession == false)
        #expect(parsed.parityCodes == [])
        #expect(parsed.maximumChunks == 4)
    }

    @Test(arguments: [
        ("min-chunk=1, max-chunk=2, max-object=3, max-chunks=4, parallel=5, expires=6", "v", "missingMember"),
        ("v=1, min-chunk=1, max-chunk=2, max-object=3, max-chunks=4, parallel=5", "expires", "missingMember"),
        ("v=\"1\", min-chunk=1, max-chunk=2, max-object=3, max-chunks=4, parallel=5, expires=6", "v", "wrongType"),
        ("v=1, min-chunk=0, max-chunk=2, max-object=3, max-chunks=4, parallel=5, expires=6", "min-chunk", "outOfRange"),
        (
            "v=1, min-chunk=3, max-chunk=2, max-object=3, max-chunks=4, parallel=5, expires=6", "min-chunk",
            "inconsistent"
        ),
        ("v=1, min-chunk=1, max-chunk=2, max-object=3, max-chunks=4, parallel=0, expires=6", "parallel", "outOfRange"),
        (
            "v=1, min-chunk=1, max-chunk=2, max-object=3, max-chunks=4, parallel=5, expires=6, possession=1",
            "possession", "wrongType"
        ),
        (
            "v=1, min-chunk=1, max-chunk=2, max-object=3, max-chunks=4, parallel=5, expires=6, parity=rs8", "parity",
            "wrongType"
        ),
    ])
    func malformedCapabilitiesNameTheirMember(text: String, member: String, code: String) {
        let error = #expect(throws: AetherProtocolError.self) { try AetherCapabilities(parsing: text) }
        #expect(error?.member == member)
        #expect(error?.code.description == code)
    }

    @Test func aCapabilitiesValueThatIsNotADictionaryOrTooLongIsRefused() {
        #expect(throws: AetherProtocolError.self) { try AetherCapabilities(parsing: "v=1,,") }
        let long = "v=1, x=\"" + String(repeating: "a", count: 9000) + "\""
        let error = #expect(throws: AetherProtocolError.self) { try AetherCapabilities(parsing: long) }
        #expect(error?.code == .tooLarge)
    }

    // MARK: Aether-Chunk

    @Test func aChunkHeaderIsFormattedInTheDocumentsOrder() {
        let header = AetherChunkHeader(length: 4_194_304, crc32c: 0, sha256: Self.sha, link: Self.link)
        #expect(
            header.fieldValue
                == "length=4194304, crc32c=:AAAAAA==:, sha-256=:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=:, "
                + "link=:\(Self.b64(Self.link.bytes)):")
        let parity = AetherChunkHeader(length: 3, crc32c: 0x364B_3FB7, sha256: Self.sha)
        #expect(
            parity.fieldValue == "length=3, crc32c=:Nks/tw==:, sha-256=:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=:")
    }

    static func b64(_ bytes: [UInt8]) -> String { StructuredField.serialize(bytes).trimmingCharacters(in: [":"]) }

    @Test func aChunkHeaderRoundTripsWithAndWithoutALink() throws {
        for header in [
            AetherChunkHeader(length: 0, crc32c: 0xFFFF_FFFF, sha256: Self.sha, link: Self.link),
            AetherChunkHeader(length: 999_999_999_999_999, crc32c: 0x0102_0304, sha256: Self.link),
        ] {
            #expect(try AetherChunkHeader(parsing: header.fieldValue) == header)
        }
        let crc = try AetherChunkHeader(parsing: "length=1, crc32c=:AQIDBA==:, sha-256=\(Self.sf(Self.sha))")
        #expect(crc.crc32c == 0x0102_0304)
    }

    static func sf(_ digest: Digest32) -> String { StructuredField.serialize(digest.bytes) }

    @Test(arguments: [
        ("crc32c=:AAAAAA==:, sha-256=SHA", "length", "missingMember"),
        ("length=1, sha-256=SHA", "crc32c", "missingMember"),
        ("length=1, crc32c=:AAAAAA==:", "sha-256", "missingMember"),
        ("length=-1, crc32c=:AAAAAA==:, sha-256=SHA", "length", "outOfRange"),
        ("length=1.5, crc32c=:AAAAAA==:, sha-256=SHA", "length", "wrongType"),
        ("length=1, crc32c=:AAAA:, sha-256=SHA", "crc32c", "outOfRange"),
        ("length=1, crc32c=0, sha-256=SHA", "crc32c", "wrongType"),
        ("length=1, crc32c=:AAAAAA==:, sha-256=:AAAA:", "sha-256", "outOfRange"),
        ("length=1, crc32c=:AAAAAA==:, sha-256=SHA, link=?1", "link", "wrongType"),
        ("length=1, crc32c=:AAAAAA==:, sha-256=SHA, md5=:AAAA:", "md5", "unknownMember"),
        ("length=(1 2), crc32c=:AAAAAA==:, sha-256=SHA", "length", "wrongType"),
    ])
    func malformedChunkHeadersNameTheirMember(text: String, member: String, code: String) {
        let value = text.replacingOccurrences(of: "SHA", with: Self.sf(Self.sha))
        let error = #expect(throws: AetherProtocolError.self) { try AetherChunkHeader(parsing: value) }
        #expect(error?.member == member)
        #expect(error?.code.description == code)
    }

    @Test func aChunkHeaderThatIsNotStructuredFieldsIsMalformed() {
        let error = #expect(throws: AetherProtocolError.self) { try AetherChunkHeader(parsing: "length=1,, crc32c") }
        #expect(error?.code == .malformed)
        let list = #expect(throws: AetherProtocolError.self) { try AetherCapabilities(parsing: "v=(1)") }
        #expect(list?.code == .wrongType)
    }

    // MARK: Aether-Receipt and Aether-Received

    @Test func receiptsAreFormattedAndParsed() throws {
        let receipt = AetherReceiptHeader(index: 5, sha256: Self.sha)
        #expect(receipt.fieldValue == "index=5, sha-256=\(Self.sf(Self.sha))")
        #expect(try AetherReceiptHeader(parsing: receipt.fieldValue) == receipt)
        let parity = AetherReceiptHeader(index: 12, sha256: Self.sha, parity: true)
        #expect(parity.fieldValue == "index=12, sha-256=\(Self.sf(Self.sha)), parity")
        #expect(try AetherReceiptHeader(parsing: parity.fieldValue) == parity)
        let missing = #expect(throws: AetherProtocolError.self) { try AetherReceiptHeader(parsing: "index=5") }
        #expect(missing?.member == "sha-256")
        let negative = #expect(throws: AetherProtocolError.self) {
            try AetherReceiptHeader(parsing: "index=-1, sha-256=\(Self.sf(Self.sha))")
        }
        #expect(negative?.code == .outOfRange)
    }

    @Test func receivedCountsAreFormattedAndAPrefixLongerThanTheCountIsRefused() throws {
        #expect(AetherReceivedHeader(chunks: 7, prefix: 3).fieldValue == "chunks=7, prefix=3")
        #expect(try AetherReceivedHeader(parsing: "chunks=7, prefix=3") == AetherReceivedHeader(chunks: 7, prefix: 3))
        let error = #expect(throws: AetherProtocolError.self) {
            try AetherReceivedHeader(parsing: "chunks=2, prefix=3")
        }
        #expect(error?.code == .inconsistent)
        let unknown = #expect(throws: AetherProtocolError.self) {
            try AetherReceivedHeader(parsing: "chunks=2, prefix=1, bytes=5")
        }
        #expect(unknown?.code == .unknownMember)
    }

    @Test func structuredFieldStringsEscapeAndRefuseNonASCII() {
        #expect(StructuredField.serialize(string: "a\"b\\c") == "\"a\\\"b\\\\c\"")
        #expect(StructuredField.serialize(string: "é") == nil)
        #expect(StructuredField.serialize(dictionary: [("Upper", .integer(1))]) == nil)
        #expect(StructuredField.serialize(dictionary: [("a", .boolean(false)), ("b", .boolean(true))]) == "a=?0, b")
    }
}
