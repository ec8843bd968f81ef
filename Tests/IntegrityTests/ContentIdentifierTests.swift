import AetherIO
import Testing

@testable import AetherIntegrity

/// Content identifiers: the ACI and the CIDv1 (raw, sha2-256, base32) naming the same bytes, each parsed strictly.
@Suite struct ContentIdentifierTests {
    private static let emptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The CID of empty raw content, as IPFS and `multiformats` print it.
    @Test func theEmptyContentCIDMatchesTheKnownValue() throws {
        let aci = try ACI(parsing: "aci:1:sha256:\(Self.emptyDigest)")
        #expect(CIDv1(digest: aci.digest).string == "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku")
        #expect(
            ACI(digest: try CIDv1(string: "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku").digest)
                .description == "aci:1:sha256:\(Self.emptyDigest)")
    }

    @Test func mappingRoundTripsForRandomDigests() throws {
        var generator = SplitMix64(seed: 3)
        for _ in 0..<200 {
            let digest = try Digest32(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let aci = ACI(digest: digest)
            let cid = CIDv1(digest: aci.digest)
            #expect(try CIDv1(string: cid.string) == cid)
            #expect(ACI(digest: cid.digest) == aci)
            #expect(try ACI(parsing: aci.description) == aci)
            #expect(cid.string.hasPrefix("bafkrei"))
            #expect(cid.string.count == 59)
        }
    }

    @Test(arguments: [
        "aci:1:sha256:" + "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",  // uppercase
        "aci:1:sha256:" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b8",  // short
        "aci:1:sha256:" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85500",  // long
        "aci:1:sha256:" + "g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",  // non-hex
        "aci:2:sha256:" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",  // version
        "aci:01:sha256:" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",  // non-canonical version
        "aci:1:sha512:" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",  // algorithm
        "aci:1:SHA256:" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "aci:1:sha256:" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855:x",  // trailing
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "",
    ])
    func malformedACIsAreRejected(_ text: String) {
        #expect {
            try ACI(parsing: text)
        } throws: { ($0 as? IntegrityError)?.code == .malformedIdentifier }
    }

    @Test(arguments: [
        "Bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku",  // uppercase multibase
        "BAFKREIHDWDCEFGH4DQKJV67UZCMW7OJEE6XEDZDETOJUZJEVTENXQUVYKU",  // base32upper
        "zb2rhe5P4gXftAwvA4eXQ5HJwsER2owDyS9sKaQRRVQPn93bA",  // base58btc
        "QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH",  // CIDv0
        "bafybeihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku",  // dag-pb codec
        "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyk",  // truncated
        "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvykuaa",  // trailing garbage
        "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvykv",  // non-zero padding bits
        "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku=",  // padding
        "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyk1",  // not base32
        "b",
        "",
    ])
    func malformedCIDsAreRejected(_ text: String) {
        #expect {
            try CIDv1(string: text)
        } throws: { ($0 as? IntegrityError)?.code == .malformedIdentifier }
    }

    @Test func binaryCIDsWithAnotherVersionCodecOrHashAreRejected() throws {
        let good = CIDv1(digest: try Digest32(hex: Self.emptyDigest)).bytes
        #expect(try CIDv1(bytes: good).bytes == good)
        for (offset, value) in [(0, UInt8(0x00)), (1, 0x70), (2, 0x13), (3, 0x40)] {
            var bad = good
            bad[offset] = value
            #expect(throws: IntegrityError.self) { try CIDv1(bytes: bad) }
        }
        #expect(throws: IntegrityError.self) { try CIDv1(bytes: good + [0]) }
        #expect(throws: IntegrityError.self) { try CIDv1(bytes: Array(good.dropLast())) }
    }

    @Test func onlyFixedChunkingIsImplementedAndTheOthersAreTypedUnsupported() throws {
        #expect(try ChunkingAlgorithm.parse("fixed") == .fixed)
        for reserved in ["fastcdc", "raptor"] {
            #expect {
                try ChunkingAlgorithm.parse(reserved)
            } throws: { ($0 as? IntegrityError)?.code == .unsupported }
        }
        #expect {
            try ChunkingAlgorithm.parse("Fixed")
        } throws: { ($0 as? IntegrityError)?.code == .malformedManifest }
    }
}
