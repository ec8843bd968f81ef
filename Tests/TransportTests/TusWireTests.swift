import Testing

@testable import AetherTransport

/// The tus backend's wire values: URLs and origins, HTTP dates, metadata, the OPTIONS answer, body replay.
@Suite struct TusWireTests {
    // MARK: Location resolution (RFC 3986 section 5.4 examples, base http://a/b/c/d;p?q)

    @Test(arguments: [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g/"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("g#s", "http://a/b/c/g"),
        (".", "http://a/b/c/"), ("..", "http://a/b/"), ("../g", "http://a/b/g"),
        ("../..", "http://a/"), ("../../g", "http://a/g"), ("../../../g", "http://a/g"), ("/./g", "http://a/g"),
        ("g.", "http://a/b/c/g."), ("g;x=1/../y", "http://a/b/c/y"), ("https://x:8443/u", "https://x:8443/u"),
    ])
    func relativeLocationsResolveAsRFC3986Says(reference: String, resolved: String) throws {
        let base = try ResourceURL(absolute: "http://a/b/c/d;p?q")
        #expect(try base.resolving(reference).text == resolved)
    }

    @Test func originsCompareSchemeHostAndEffectivePort() throws {
        let base = try ResourceURL(absolute: "http://Example.org/files/")
        #expect(try base.origin == ResourceURL(absolute: "http://example.org:80/files/x").origin)
        #expect(try base.origin != ResourceURL(absolute: "https://example.org/files/x").origin)
        #expect(try base.origin != ResourceURL(absolute: "http://example.org:8080/files/x").origin)
        #expect(try base.origin != ResourceURL(absolute: "http://evil.example/files/x").origin)
        #expect(
            try ResourceURL(absolute: "http://[::1]:9/x").origin == ResourceURL(absolute: "http://[::1]:9/y").origin)
        #expect(try ResourceURL(absolute: "http://user@h/x").authority == "h")
    }

    @Test(arguments: [
        "ftp://h/x", "h/x", "http:h", "http://", "http://h:99999/", "http://h:1x/", "http://h/a b", "http://h/\r\n",
        "http://[::1/x",
    ])
    func malformedURLsAreProtocolViolations(text: String) {
        #expect(throws: TransportError.self) { try ResourceURL(absolute: text) }
        let caught = try? ResourceURL(absolute: "http://h/").resolving(text)
        if text.contains(" ") || text.contains("\r") { #expect(caught == nil) }
        #expect((try? ResourceURL(absolute: "http://h/").resolving("")) == nil)
    }

    // MARK: HTTP dates (RFC 9110 section 5.6.7: 784111777 is Sun, 06 Nov 1994 08:49:37 GMT)

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
        "  Sun, 06 Nov 1994 08:49:37 GMT ",
    ])
    func theThreeDateFormsParse(text: String) {
        #expect(HTTPDate.parse(text) == 784_111_777)
    }

    @Test(arguments: [
        "", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 31 Feb 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT", "2026-11-30T10:00:00Z", "Sun, 06 Nov 1994",
        "Sun Nov 6 08:49:37 1994", "Sunday, 06-Nov-1994 08:49:37 GMT",
    ])
    func anythingElseIsNotADate(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test func formattingAndParsingAgreeAcrossLeapDaysAndCenturies() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        for seconds: Int64 in [951_782_400, 4_107_542_399, 1_709_164_800, 1_234_567_890] {
            #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
        }
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT") == 951_782_400)
        #expect(HTTPDate.parse("Mon, 29 Feb 2100 00:00:00 GMT") == nil)
    }

    @Test func uploadExpiresIsReadOrRefused() throws {
        #expect(try TusBackend.expiry(["Upload-Expires": "Sun, 06 Nov 1994 08:49:37 GMT"]) == 784_111_777)
        #expect(try TusBackend.expiry([:]) == nil)
        let error = #expect(throws: TransportError.self) { try TusBackend.expiry(["Upload-Expires": "tomorrow"]) }
        #expect(error?.code == .protocolViolation)
    }

    // MARK: Upload-Metadata

    @Test func metadataIsSortedBase64PairsAndAnEmptyValueIsTheKeyAlone() throws {
        let header = try TusMetadata.encode(["filename": "world_domination_plan.pdf", "is_confidential": ""])
        #expect(header == "filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential")
        #expect(try TusMetadata.decode(header) == ["filename": "world_domination_plan.pdf", "is_confidential": ""])
        #expect(try TusMetadata.decode("a YQ==, b Yg==") == ["a": "a", "b": "b"])
        #expect(try TusMetadata.decode("") == [:])
        #expect(try TusMetadata.encode(["name": "ü"]) == "name w7w=")
    }

    /// Found by the `tus-ietf-fields` fuzz target: a 300-byte key was decoded but could not be encoded again, so
    /// the receiver's tus HEAD dropped the whole `Upload-Metadata`. Every decoded key now encodes.
    @Test
    func everyDecodedKeyEncodesAgain() throws {
        let longest = String(repeating: "k", count: 256)
        let decoded = try TusMetadata.decode("\(longest) YQ==")
        #expect(try TusMetadata.decode(TusMetadata.encode(decoded)) == [longest: "a"])
        #expect(throws: TransportError.self) { try TusMetadata.decode(String(repeating: "k", count: 300) + " YQ==") }
    }

    @Test(arguments: ["a b", "a,b", "", "é"])
    func keysTheHeaderCannotCarryAreRefused(key: String) {
        let error = #expect(throws: TransportError.self) { try TusMetadata.encode([key: "v"]) }
        #expect(error?.code == .invalidArgument)
    }

    @Test(arguments: [
        "a !!!", "a YQ== b", "a YQ==,a Yg==", "a YQ==,,b Yg==", "a /w==", String(repeating: "k", count: 257),
    ])
    func malformedReceivedMetadataIsAProtocolViolation(header: String) {
        let error = #expect(throws: TransportError.self) { try TusMetadata.decode(header) }
        #expect(error?.code == .protocolViolation)
    }

    // MARK: OPTIONS answer and capabilities

    static let full: HTTPHeaders = [
        "Tus-Version": "1.0.0,0.2.2", "Tus-Extension": "creation,creation-with-upload,termination,concatenation",
        "Tus-Max-Size": "1073741824",
    ]

    @Test func concatenationAllowsParallelOutOfOrderPartsUnderTheMaximumSize() throws {
        let info = try TusServerInfo(headers: Self.full)
        #expect(info.versions == ["1.0.0", "0.2.2"])
        #expect(info.maximumSize == 1 << 30)
        let capabilities = info.capabilities(TusBackendOptions(maximumPartSize: 8 << 20))
        #expect(capabilities.parallelParts && capabilities.outOfOrderParts)
        #expect(capabilities.resumeQuery == .parts)
        #expect(capabilities.maximumParts == 100)
        #expect(capabilities.maximumPartSize == 8 << 20)
        #expect(capabilities.maximumObjectSize == 1 << 30)
        #expect(capabilities.checksums.isEmpty)
        let sequential = info.capabilities(TusBackendOptions(useConcatenation: false))
        #expect(!sequential.parallelParts && !sequential.outOfOrderParts)
        #expect(sequential.resumeQuery == .offset)
    }

    @Test func withoutConcatenationPartsGoOneAfterAnotherAndChecksumsFollowTheServersList() throws {
        let info = try TusServerInfo(headers: [
            "Tus-Version": "1.0.0", "Tus-Extension": "creation, checksum", "Tus-Checksum-Algorithm": "md5,crc32",
        ])
        let capabilities = info.capabilities(TusBackendOptions())
        #expect(!capabilities.parallelParts && !capabilities.outOfOrderParts)
        #expect(capabilities.resumeQuery == .offset)
        #expect(capabilities.maximumObjectSize == Int64.max)
        #expect(capabilities.checksums == [.crc32])
        #expect(info.checksumAlgorithm(preferring: [.sha1, .crc32]) == .crc32)
        #expect(info.checksumAlgorithm(preferring: [.sha1]) == nil)
        #expect(info.checksumAlgorithm(preferring: []) == nil)
        let both = try TusServerInfo(headers: [
            "Tus-Version": "1.0.0", "Tus-Extension": "checksum", "Tus-Checksum-Algorithm": "crc32,sha1",
        ])
        #expect(both.checksumAlgorithm(preferring: [.sha1, .crc32]) == .sha1)
        #expect(both.checksumAlgorithm(preferring: [.crc32, .sha1]) == .crc32)
        let unannounced = try TusServerInfo(headers: ["Tus-Version": "1.0.0", "Tus-Checksum-Algorithm": "sha1"])
        #expect(unannounced.checksumAlgorithm(preferring: [.sha1]) == nil)
    }

    @Test func aLayoutFromTheCapabilitiesFitsTheConcatenationHeader() throws {
        let info = try TusServerInfo(headers: Self.full)
        let layout = try PartLayout(
            objectSize: 1 << 30, preferred: 1 << 20, capabilities: info.capabilities(TusBackendOptions()))
        #expect(layout.partCount <= 100)
    }

    @Test func answersThatAreNotTusOrNot1_0_0AreRefused() {
        let none = #expect(throws: TransportError.self) { try TusServerInfo(headers: [:]) }
        #expect(none?.code == .protocolViolation)
        let old = #expect(throws: TransportError.self) { try TusServerInfo(headers: ["Tus-Version": "0.2.2"]) }
        #expect(old?.code == .versionUnsupported)
        let size = #expect(throws: TransportError.self) {
            try TusServerInfo(headers: ["Tus-Version": "1.0.0", "Tus-Max-Size": "-1"])
        }
        #expect(size?.code == .protocolViolation)
    }

    @Test func aServerWithoutCreationCannotBeUsed() throws {
        let info = try TusServerInfo(headers: ["Tus-Version": "1.0.0", "Tus-Extension": "termination"])
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let error = #expect(throws: TransportError.self) {
            try TusBackend(creationURL: "http://127.0.0.1:1/files/", client: client, server: info)
        }
        #expect(error?.code == .remoteRejected)
        let url = #expect(throws: TransportError.self) {
            try TusBackend(creationURL: "files/", client: client, server: try TusServerInfo(headers: Self.full))
        }
        #expect(url?.code == .invalidArgument)
    }

    @Test func integersAreNonNegativeDecimalsOnly() {
        #expect(TusBackend.integer("0") == 0)
        #expect(TusBackend.integer(" 123 ") == 123)
        for bad in ["", "-1", "+1", "1.0", "0x10", "1 2", "9999999999999999999"] {
            #expect(TusBackend.integer(bad) == nil)
        }
    }

    // MARK: Bodies and checksums

    @Test func aBodyHeldInMemoryCanBeSentAgainFromAnyOffset() {
        let body = HTTPRequestBody.bytes(Array(0..<100))
        #expect(body.dropping(first: 0)?.length == 100)
        #expect(body.dropping(first: 100)?.length == 0)
        #expect(body.dropping(first: 101) == nil)
        guard case .pieces(let pieces, let length)? = body.dropping(first: 40)?.storage,
            case .bytes(let bytes) = pieces.first
        else {
            Issue.record("the tail is not held in memory")
            return
        }
        #expect(length == 60)
        #expect(bytes == Array(40..<100))
        #expect(HTTPRequestBody.stream(HTTPBodyStream(length: 10)).dropping(first: 0) == nil)
    }

    @Test func uploadChecksumValuesAreTheBase64OfTheDigest() throws {
        let body = HTTPRequestBody.bytes(Array("hello world".utf8))
        // The tus 1.0.0 checksum example: sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0=
        #expect(TusChecksumAlgorithm.sha1.digest(of: body).map(Self.base64) == "Kq5sNclPz7QV2+lfQIuc6R7oRu0=")
        // CRC-32 0x0d4a1185, big-endian.
        #expect(TusChecksumAlgorithm.crc32.digest(of: body) == [0x0D, 0x4A, 0x11, 0x85])
        #expect(TusChecksumAlgorithm.sha1.digest(of: .stream(HTTPBodyStream(length: 1))) == nil)
        let tail = try #require(body.dropping(first: 6))
        #expect(TusChecksumAlgorithm.crc32.digest(of: tail) == Self.bigEndian(0x3A77_1143))
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var out = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[value >> (18 - 6 * position) & 63] : "=")
            }
            index += 3
        }
        return out
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
