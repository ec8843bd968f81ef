import AetherIO
import Testing

@testable import AetherTransport

/// The IETF resumable upload backend's wire values: Structured Fields (RFC 9651) items and dictionaries,
/// `Upload-Limit` per draft version, RFC 9530 digest fields, capabilities from limits.
@Suite struct IETFWireTests {
    // MARK: Items

    @Test(arguments: [
        ("0", StructuredField.Item.integer(0)), ("42", .integer(42)), ("  7", .integer(7)), ("-3", .integer(-3)),
        ("999999999999999", .integer(999_999_999_999_999)), ("?1", .boolean(true)), ("?0", .boolean(false)),
        ("1.5", .decimal(1.5)), ("\"a\\\"b\"", .string("a\"b")), ("token/x", .token("token/x")),
        (":aGVsbG8=:", .bytes(Array("hello".utf8))), (":aGVsbG8:", .bytes(Array("hello".utf8))),
        ("5;p=1", .integer(5)), ("?1;a;b=?0", .boolean(true)),
    ])
    func itemsParseAsRFC9651Says(text: String, item: StructuredField.Item) {
        #expect(StructuredField.item(text) == item)
    }

    @Test(arguments: [
        "", "abc1 x", "1000000000000000", "12abc", "?2", "?", "1.", "1.2345", "\"open", ":a*b:", "-", "1,2", "?1 ?0",
        "\u{7}", "1;", "1;A=2",
    ])
    func malformedItemsFailTheField(text: String) {
        #expect(StructuredField.item(text) == nil)
    }

    @Test func anItemLongerThanTheLimitFails() {
        #expect(StructuredField.item(String(repeating: " ", count: 9000) + "1") == nil)
    }

    @Test func serializationRoundTrips() {
        #expect(StructuredField.serialize(true) == "?1")
        #expect(StructuredField.serialize(false) == "?0")
        #expect(StructuredField.serialize(Array("hello".utf8)) == ":aGVsbG8=:")
        #expect(StructuredField.serialize(Int64(1234)) == "1234")
        #expect(StructuredField.serialize(Int64(1_000_000_000_000_000)) == nil)
        for bytes in [[UInt8](), [0], [0, 1], [0, 1, 2], Array(0...255)] {
            #expect(StructuredField.item(StructuredField.serialize(bytes)) == .bytes(bytes))
        }
    }

    // MARK: Dictionaries

    @Test func dictionariesKeepOrderBareKeysAndTheLastRepeat() throws {
        let members = try #require(StructuredField.dictionary("a=1, b, c=?0;x=y, d=(1 2);q, a=3"))
        #expect(members.map(\.key) == ["a", "b", "c", "d"])
        #expect(members[0].value == .item(.integer(3)))
        #expect(members[1].value == .item(.boolean(true)))
        #expect(members[2].value == .item(.boolean(false)))
        #expect(members[3].value == .innerList([.integer(1), .integer(2)]))
        #expect(StructuredField.dictionary("")?.isEmpty == true)
    }

    @Test(arguments: ["A=1", "a=1,", "a=1 b=2", "a=", "1=2", "a=(1 2", "a=1,,b=2", "a=\"x"])
    func malformedDictionariesFail(text: String) {
        #expect(StructuredField.dictionary(text) == nil)
    }

    // MARK: Upload-Limit

    @Test func limitsParseEveryKeyOfTheLatestDraft() throws {
        let limits = try #require(
            IETFUploadLimits(
                field: "max-size=1234567890, min-size=10, max-append-size=5000000, min-append-size=100, max-age=3600",
                version: .latest))
        #expect(
            limits
                == IETFUploadLimits(
                    maximumSize: 1_234_567_890, minimumSize: 10, maximumAppendSize: 5_000_000, minimumAppendSize: 100,
                    lifetime: 3600))
        #expect(
            limits.field(version: .latest)
                == "max-size=1234567890, min-size=10, max-append-size=5000000, min-append-size=100, max-age=3600")
    }

    @Test func theLifetimeKeyDependsOnTheDraft() throws {
        #expect(IETFUploadLimits(field: "expires=60", version: .draft05)?.lifetime == 60)
        #expect(IETFUploadLimits(field: "max-age=60", version: .latest)?.lifetime == 60)
        // The other draft's key is an unknown key: ignored, not an error.
        #expect(IETFUploadLimits(field: "max-age=60", version: .draft05) == IETFUploadLimits())
        #expect(IETFUploadLimits(field: "expires=60", version: .latest) == IETFUploadLimits())
        #expect(IETFUploadLimits(lifetime: 5).field(version: .draft05) == "expires=5")
        #expect(IETFUploadLimits().field(version: .latest) == "min-size=0")
    }

    @Test(arguments: [
        "max-size=1.5", "max-size=\"10\"", "max-size", "max-size=-1", "max-append-size=(1 2)", "max-size=1 x",
        "max-size=?1",
    ])
    func aKnownKeyWithAnotherTypeOrAMalformedFieldIsIgnoredWhole(field: String) {
        #expect(IETFUploadLimits(field: field, version: .latest) == nil)
    }

    @Test func unknownKeysAreIgnored() {
        #expect(
            IETFUploadLimits(field: "future=\"x\", max-size=7, other=(1)", version: .latest)
                == IETFUploadLimits(maximumSize: 7))
    }

    @Test func limitsBoundTheCapabilities() {
        let base = BackendCapabilities(
            minimumPartSize: 1, maximumPartSize: 64 << 20, maximumParts: 1000, equalParts: false, parallelParts: false,
            outOfOrderParts: false, checksums: [.sha256], resumeQuery: .offset, maximumObjectSize: 1 << 40)
        let bounded = IETFUploadLimits(maximumSize: 4096, maximumAppendSize: 1024, minimumAppendSize: 512)
            .capabilities(base)
        #expect(bounded.maximumObjectSize == 4096)
        #expect(bounded.maximumPartSize == 1024)
        #expect(bounded.minimumPartSize == 512)
        #expect(!bounded.parallelParts)
        #expect(bounded.resumeQuery == .offset)
        #expect(IETFUploadLimits(maximumSize: 1 << 50).capabilities(base).maximumObjectSize == 1 << 40)
    }

    // MARK: Digests and fields

    @Test func contentDigestMatchesRFC9530Example() throws {
        // RFC 9530 section 2: the content {"hello": "world"} has sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:
        let digest = SHA256.hash(Array("{\"hello\": \"world\"}".utf8))
        #expect(
            IETFResumableBackend.digestField(digest) == "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:")
        let headers = HTTPHeaders([
            ("Repr-Digest", "sha-512=:AAAA:, sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:")
        ])
        #expect(IETFResumableBackend.reprDigest(headers) == digest)
        #expect(IETFResumableBackend.reprDigest(HTTPHeaders([("Repr-Digest", "sha-256=:AAAA:")])) == nil)
        #expect(IETFResumableBackend.reprDigest(HTTPHeaders([("Repr-Digest", "sha-256=X")])) == nil)
    }

    @Test func offsetAndCompletionFieldsIgnoreWhatIsNotTheirType() {
        #expect(IETFResumableBackend.integer(HTTPHeaders([("Upload-Offset", "100")]), "Upload-Offset") == 100)
        #expect(IETFResumableBackend.integer(HTTPHeaders([("Upload-Offset", "-1")]), "Upload-Offset") == nil)
        #expect(IETFResumableBackend.integer(HTTPHeaders([("Upload-Offset", "12abc")]), "Upload-Offset") == nil)
        #expect(IETFResumableBackend.integer(HTTPHeaders([("Upload-Offset", "?1")]), "Upload-Offset") == nil)
        // Two fields combine into a list, which is not an Item: ignored.
        #expect(
            IETFResumableBackend.integer(
                HTTPHeaders([("Upload-Offset", "1"), ("upload-offset", "2")]), "Upload-Offset")
                == nil)
        #expect(IETFResumableBackend.boolean(HTTPHeaders([("Upload-Complete", "?1")]), "Upload-Complete") == true)
        #expect(IETFResumableBackend.boolean(HTTPHeaders([("Upload-Complete", "?0")]), "Upload-Complete") == false)
        #expect(IETFResumableBackend.boolean(HTTPHeaders([("Upload-Complete", "true")]), "Upload-Complete") == nil)
        #expect(IETFResumableBackend.boolean(HTTPHeaders(), "Upload-Complete") == nil)
    }

    @Test func theBackendSpeaksInOrderAndRefusesBadCreationURLs() throws {
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        let backend = try IETFResumableBackend(
            creationURL: "http://127.0.0.1:9/create", client: client, version: .draft05,
            limits: IETFUploadLimits(maximumSize: 10_000, maximumAppendSize: 2048))
        #expect(!backend.capabilities.parallelParts && !backend.capabilities.outOfOrderParts)
        #expect(backend.capabilities.resumeQuery == .offset)
        #expect(backend.capabilities.maximumPartSize == 2048)
        #expect(backend.capabilities.maximumObjectSize == 10_000)
        #expect(IETFInteropVersion.draft05.rawValue == 6)
        for bad in ["ftp://x/y", "/relative", "http://", "http://a b/"] {
            #expect(throws: TransportError.self) {
                _ = try IETFResumableBackend(creationURL: bad, client: client)
            }
        }
    }
}
