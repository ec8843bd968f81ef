import AetherIO
import AetherIntegrity
import Foundation
import Testing

@testable import AetherTransport

/// The native JSON documents (`docs/PROTOCOL.md` sections 3.1, 3.5-3.8, 7): canonical bytes, round trips, and
/// strict parsing that names the member at fault.
@Suite struct NativeDocumentTests {
    static let a = SHA256.hash(Array("a".utf8))
    static let b = SHA256.hash(Array("b".utf8))
    static let c = SHA256.hash(Array("c".utf8))
    static let id = "abcdefghijklmnopqrstuvwxyz"

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: Create

    static let create = NativeCreateRequest(
        size: 1_073_741_824, chunkSize: 4_194_304, chunks: 256, chainSessionID: "session-1",
        contentID: "aci:1:sha256:\(a.hex)", parity: ParityScheme(data: 10, parity: 2))

    @Test func theCreateRequestIsCanonicalAsInTheProtocolDocument() throws {
        let expected =
            "{\"chainSessionID\":\"session-1\",\"chunkSize\":4194304,\"chunks\":256,\"contentID\":\"aci:1:sha256:"
            + Self.a.hex + "\",\"parity\":{\"code\":\"rs8\",\"data\":10,\"parity\":2},\"size\":1073741824}"
        #expect(Self.text(Self.create.jsonBytes) == expected)
        #expect(try NativeCreateRequest(json: Self.create.jsonBytes) == Self.create)
        let spaced =
            "{ \"size\" : 0 ,\n \"chunkSize\": 16384, \"chunks\": 1, \"chainSessionID\": \"s\", \"parity\": null }"
        let minimal = try NativeCreateRequest(json: Self.bytes(spaced))
        #expect(minimal == NativeCreateRequest(size: 0, chunkSize: 16384, chunks: 1, chainSessionID: "s"))
        #expect(
            Self.text(minimal.jsonBytes) == "{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":1,\"size\":0}")
    }

    @Test func metadataTravelsInTheCreateRequestWithinItsBoundsAndOnlyToAReceiverThatTakesIt() throws {
        var request = NativeCreateRequest(size: 0, chunkSize: 16384, chunks: 1, chainSessionID: "s")
        request.metadata = ["filename": "frames/0001 é.jpg", "kind": "frame"]
        #expect(
            Self.text(request.jsonBytes)
                == "{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":1,\"metadata\":{\"filename\":"
                + "\"frames/0001 é.jpg\",\"kind\":\"frame\"},\"size\":0}")
        #expect(try NativeCreateRequest(json: request.jsonBytes) == request)
        var many = request
        many.metadata = Dictionary(uniqueKeysWithValues: (0..<33).map { ("k\($0)", "v") })
        #expect(throws: AetherProtocolError.self) { try NativeCreateRequest(json: many.jsonBytes) }
        // The capability: parsed when present, absent is false, written only when true.
        let offered = try AetherCapabilities(parsing: AetherCapabilities(metadata: true).fieldValue)
        #expect(offered.metadata)
        #expect(AetherCapabilities(metadata: true).fieldValue.hasSuffix("metadata"))
        #expect(!(try AetherCapabilities(parsing: AetherCapabilities().fieldValue)).metadata)
        #expect(!AetherCapabilities().fieldValue.contains("metadata"))
        // What the client keeps: valid names and values, the rest left out rather than failing the upload.
        let kept = NativeBackend.keptMetadata([
            "filename": "a/b.bin", "bad name": "x", "big": String(repeating: "y", count: 2000),
        ])
        #expect(kept == ["filename": "a/b.bin"])
    }

    static let good = "\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":2,\"size\":20000"

    @Test(arguments: [
        ("{\(good),\"extra\":1}", "extra", "unknownMember"),
        ("{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":2}", "size", "missingMember"),
        ("{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":2,\"size\":\"20000\"}", "size", "wrongType"),
        ("{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":2,\"size\":20000.0}", "size", "wrongType"),
        ("{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":2,\"size\":2e4}", "size", "wrongType"),
        ("{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":2,\"size\":-1}", "size", "outOfRange"),
        ("{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":2,\"size\":1000000000000000}", "size", "outOfRange"),
        (
            "{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":2,\"size\":99999999999999999999}", "size",
            "outOfRange"
        ),
        ("{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":3,\"size\":20000}", "chunks", "inconsistent"),
        ("{\"chainSessionID\":\"s\",\"chunkSize\":16000,\"chunks\":2,\"size\":20000}", "chunkSize", "outOfRange"),
        ("{\"chainSessionID\":\"\",\"chunkSize\":16384,\"chunks\":2,\"size\":20000}", "chainSessionID", "outOfRange"),
        ("{\"chainSessionID\":7,\"chunkSize\":16384,\"chunks\":2,\"size\":20000}", "chainSessionID", "wrongType"),
        ("{\(good),\"contentID\":\"sha256:00\"}", "contentID", "malformed"),
        ("{\(good),\"parity\":{\"code\":\"rs8\",\"data\":200,\"parity\":100}}", "parity.parity", "inconsistent"),
        ("{\(good),\"parity\":{\"code\":\"rs8\",\"data\":0,\"parity\":1}}", "parity.data", "outOfRange"),
        ("{\(good),\"parity\":{\"code\":\"rs16\",\"data\":4,\"parity\":1}}", "parity.code", "outOfRange"),
        ("{\(good),\"parity\":{\"code\":\"rs8\",\"data\":4,\"parity\":1,\"x\":0}}", "parity.x", "unknownMember"),
        ("{\(good),\"parity\":[4,1]}", "parity", "wrongType"),
        ("{\(good),\"size\":1}", "size", "malformed"),
        ("{\(good),\"metadata\":[\"a\"]}", "metadata", "wrongType"),
        ("{\(good),\"metadata\":{\"filename\":7}}", "metadata.filename", "wrongType"),
        ("{\(good),\"metadata\":{\"file name\":\"a\"}}", "metadata", "malformed"),
        ("{\(good),\"metadata\":{\"\":\"a\"}}", "metadata", "malformed"),
        (
            "{\(good),\"metadata\":{\"filename\":\"\(String(repeating: "x", count: 1025))\"}}", "metadata.filename",
            "outOfRange"
        ),
    ])
    func malformedCreateRequestsNameTheirMember(json: String, member: String, code: String) {
        let error = #expect(throws: AetherProtocolError.self) { try NativeCreateRequest(json: Self.bytes(json)) }
        #expect(error?.member == member)
        #expect(error?.code.description == code)
    }

    @Test(arguments: [
        "", "{", "[]", "{\"a\":1}x", "{\"a\":01}", "{\"a\":.5}", "{\"a\":tru}", "{\"a\":\"\\x\"}", "{\"a\":\"\u{01}\"}",
        "{\"a\":\"\\ud800\"}", "{a:1}", "{\"a\":1,}", "[[[[[[[[[[1]]]]]]]]]]",
    ])
    func textThatIsNotJSONOrNotAnObjectIsRefused(json: String) {
        #expect(throws: AetherProtocolError.self) { try NativeCreateRequest(json: Self.bytes(json)) }
    }

    @Test func aDocumentOverTheLimitIsRefusedBeforeParsing() {
        let huge = Self.bytes("{\"chainSessionID\":\"" + String(repeating: "a", count: 70_000) + "\"")
        let error = #expect(throws: AetherProtocolError.self) { try NativeCreateRequest(json: huge) }
        #expect(error?.code == .tooLarge)
    }

    @Test func stringsAreEscapedCanonicallyAndUnicodeEscapesAreRead() throws {
        let request = NativeCreateRequest(
            size: 0, chunkSize: 16384, chunks: 1, chainSessionID: "q\"\\/\u{8}\t\n\u{c}\r\u{1}é😀")
        let json = Self.text(request.jsonBytes)
        #expect(json.contains("\"chainSessionID\":\"q\\\"\\\\/\\b\\t\\n\\f\\r\\u0001é😀\""))
        #expect(try NativeCreateRequest(json: request.jsonBytes) == request)
        let escaped = try NativeCreateRequest(
            json: Self.bytes(
                "{\"chainSessionID\":\"\\u00e9\\ud83d\\ude00\\/\",\"chunkSize\":16384,\"chunks\":1,\"size\":0}"))
        #expect(escaped.chainSessionID == "é😀/")
    }

    // MARK: Status

    @Test func bitmapsPutIndexZeroInTheLowestBitOfTheFirstByte() throws {
        let bitmap = ChunkBitmap(count: 10, set: [0, 3, 9])
        #expect(bitmap.bytes == [0b0000_1001, 0b0000_0010])
        #expect(bitmap.base64 == "CQI=")
        #expect(bitmap.setIndices == [0, 3, 9])
        #expect(bitmap.prefix == 1)
        #expect(try ChunkBitmap(base64: "CQI=", count: 10) == bitmap)
        let pastEnd = #expect(throws: AetherProtocolError.self) { try ChunkBitmap(base64: "CQQ=", count: 10) }
        #expect(pastEnd?.code == .inconsistent)
        let short = #expect(throws: AetherProtocolError.self) { try ChunkBitmap(base64: "CQ==", count: 10) }
        #expect(short?.code == .inconsistent)
        let notBase64 = #expect(throws: AetherProtocolError.self) { try ChunkBitmap(base64: "CQI", count: 10) }
        #expect(notBase64?.code == .malformed)
    }

    static let status = NativeStatusDocument(
        id: id, size: 1_073_741_824, chunkSize: 4_194_304, chunks: 256,
        received: ChunkBitmap(count: 256, set: 0..<100), chainVerifiedThrough: 99, expires: 1_796_126_400,
        parity: .init(scheme: ParityScheme(data: 10, parity: 2), received: ChunkBitmap(count: 52, set: [1])),
        possessionChallenge: nil, state: .open)

    @Test func theStatusDocumentIsCanonicalAndRoundTrips() throws {
        let json = Self.text(Self.status.jsonBytes)
        let received = ChunkBitmap(count: 256, set: 0..<100).base64
        #expect(
            json
                == "{\"chainVerifiedThrough\":99,\"chunkSize\":4194304,\"chunks\":256,\"expires\":\"2026-12-01T12:00:00Z\","
                + "\"id\":\"\(Self.id)\",\"parity\":{\"code\":\"rs8\",\"data\":10,\"parity\":2,\"received\":\"AgAAAAAAAA==\"},"
                + "\"possession\":null,\"received\":\"\(received)\",\"size\":1073741824,\"state\":\"open\"}")
        #expect(try NativeStatusDocument(json: Self.status.jsonBytes) == Self.status)
        var withChallenge = Self.status
        withChallenge.possessionChallenge = [1, 2, 3]
        withChallenge.parity = nil
        withChallenge.state = .complete
        #expect(Self.text(withChallenge.jsonBytes).contains("\"possession\":{\"challenge\":\"AQID\"}"))
        #expect(try NativeStatusDocument(json: withChallenge.jsonBytes) == withChallenge)
        // The chain's link at `chainVerifiedThrough` (the head over the checked prefix, for resume level 3).
        var withLink = Self.status
        withLink.chainLink = SHA256.hash(Array("link 99".utf8))
        #expect(Self.text(withLink.jsonBytes).hasPrefix("{\"chainLink\":\"\(withLink.chainLink?.hex ?? "")\","))
        #expect(try NativeStatusDocument(json: withLink.jsonBytes) == withLink)
        // A link without a checked chunk, or not 64 lowercase hex digits, is refused.
        var orphan = Self.text(withLink.jsonBytes)
        orphan = orphan.replacingOccurrences(of: "\"chainVerifiedThrough\":99", with: "\"chainVerifiedThrough\":-1")
        let inconsistent = #expect(throws: AetherProtocolError.self) {
            try NativeStatusDocument(json: Self.bytes(orphan))
        }
        #expect(inconsistent?.member == "chainLink")
        #expect(inconsistent?.code == .inconsistent)
        let upper = Self.text(withLink.jsonBytes).replacingOccurrences(
            of: withLink.chainLink?.hex ?? "", with: (withLink.chainLink?.hex ?? "").uppercased())
        let malformed = #expect(throws: AetherProtocolError.self) { try NativeStatusDocument(json: Self.bytes(upper)) }
        #expect(malformed?.member == "chainLink")
    }

    @Test(arguments: [
        ("\"state\":\"open\"", "\"state\":\"done\"", "state", "outOfRange"),
        ("\"chainVerifiedThrough\":99", "\"chainVerifiedThrough\":256", "chainVerifiedThrough", "outOfRange"),
        ("\"chainVerifiedThrough\":99", "\"chainVerifiedThrough\":-2", "chainVerifiedThrough", "outOfRange"),
        ("\"expires\":\"2026-12-01T12:00:00Z\"", "\"expires\":\"2026-12-01 12:00:00\"", "expires", "malformed"),
        ("\"expires\":\"2026-12-01T12:00:00Z\"", "\"expires\":\"2026-02-30T12:00:00Z\"", "expires", "malformed"),
        ("\"id\":\"\(id)\"", "\"id\":\"ABCDEFGHIJKLMNOPQRSTUVWXYZ\"", "id", "malformed"),
        ("\"chunks\":256", "\"chunks\":255", "chunks", "inconsistent"),
        ("\"received\":\"AgAAAAAAAA==\"", "\"received\":\"AgAAAAAAAAA=\"", "parity.received", "inconsistent"),
        ("\"possession\":null", "\"possession\":{\"challenge\":5}", "possession.challenge", "wrongType"),
        ("\"possession\":null", "\"possession\":{\"nonce\":\"AA==\"}", "possession.nonce", "unknownMember"),
    ])
    func malformedStatusDocumentsNameTheirMember(from: String, to: String, member: String, code: String) {
        let json = Self.text(Self.status.jsonBytes).replacingOccurrences(of: from, with: to)
        #expect(json != Self.text(Self.status.jsonBytes))
        let error = #expect(throws: AetherProtocolError.self) { try NativeStatusDocument(json: Self.bytes(json)) }
        #expect(error?.member == member)
        #expect(error?.code.description == code)
    }

    @Test func timestampsAreRFC3339InUTC() {
        #expect(RFC3339Time.format(0) == "1970-01-01T00:00:00Z")
        #expect(RFC3339Time.format(1_796_054_400) == "2026-11-30T16:00:00Z")
        #expect(RFC3339Time.format(951_782_400) == "2000-02-29T00:00:00Z")
        #expect(RFC3339Time.parse("2000-02-29T00:00:00Z") == 951_782_400)
        #expect(RFC3339Time.parse("1900-02-29T00:00:00Z") == nil)
        #expect(RFC3339Time.parse("2026-11-30T24:00:00Z") == nil)
        #expect(RFC3339Time.parse("2026-11-30T16:00:00+00:00") == nil)
    }

    // MARK: Challenges

    static func item(_ index: Int, _ offset: Int64 = 0, _ length: Int64 = 16384) throws -> ByzantineChallenge.Item {
        try ByzantineChallenge.Item(index: index, offset: offset, length: length)
    }

    @Test func challengeRequestsAreVersion2CanonicalAndBounded() throws {
        let nonce = [UInt8](repeating: 7, count: 32)
        let nonceB64 = Data(nonce).base64EncodedString()
        let request = NativeChallengeRequest(items: [try Self.item(3), try Self.item(17, 100, 5)], nonce: nonce)
        #expect(
            Self.text(request.jsonBytes)
                == "{\"items\":[{\"index\":3,\"length\":16384,\"offset\":0},{\"index\":17,\"length\":5,"
                + "\"offset\":100}],\"nonce\":\"\(nonceB64)\",\"v\":2}")
        #expect(try NativeChallengeRequest(json: request.jsonBytes) == request)
        #expect(request.totalBytes == 16389)
        let one = "{\"index\":1,\"length\":1,\"offset\":0}"
        for (json, code) in [
            ("{\"items\":[],\"nonce\":\"\(nonceB64)\",\"v\":2}", AetherProtocolError.Code.outOfRange),
            ("{\"items\":[\(one),\(one)],\"nonce\":\"\(nonceB64)\",\"v\":2}", .inconsistent),
            ("{\"items\":[{\"index\":-1,\"length\":1,\"offset\":0}],\"nonce\":\"\(nonceB64)\",\"v\":2}", .outOfRange),
            ("{\"items\":[{\"index\":1,\"length\":-1,\"offset\":0}],\"nonce\":\"\(nonceB64)\",\"v\":2}", .outOfRange),
            ("{\"items\":[{\"index\":1,\"offset\":0}],\"nonce\":\"\(nonceB64)\",\"v\":2}", .missingMember),
            ("{\"items\":[\(one)],\"nonce\":\"AAAA\",\"v\":2}", .outOfRange),
            ("{\"items\":\"1\",\"nonce\":\"\(nonceB64)\",\"v\":2}", .wrongType),
            (
                "{\"items\":[\((0..<65).map { "{\"index\":\($0),\"length\":1,\"offset\":0}" }.joined(separator: ","))],"
                    + "\"nonce\":\"\(nonceB64)\",\"v\":2}",
                .outOfRange
            ),
            // Version 1 and unknown versions are refused before any other member is read: never misread.
            ("{\"indices\":[3,17],\"nonce\":\"\(nonceB64)\"}", .versionUnsupported),
            ("{\"items\":[\(one)],\"nonce\":\"\(nonceB64)\"}", .versionUnsupported),
            ("{\"items\":[\(one)],\"nonce\":\"\(nonceB64)\",\"v\":1}", .versionUnsupported),
            ("{\"items\":[\(one)],\"nonce\":\"\(nonceB64)\",\"v\":3}", .versionUnsupported),
            ("{\"items\":[\(one)],\"nonce\":\"\(nonceB64)\",\"v\":null}", .versionUnsupported),
            ("{\"items\":[\(one)],\"nonce\":\"\(nonceB64)\",\"v\":\"2\"}", .wrongType),
        ] {
            let error = #expect(throws: AetherProtocolError.self) { try NativeChallengeRequest(json: Self.bytes(json)) }
            #expect(error?.code == code, "\(json)")
        }
    }

    @Test func challengeAnswersCarryMACsAndProofsOfTheRightShape() throws {
        var tree = StreamingMerkleTree()
        for hash in [Self.a, Self.b, Self.c] { _ = try tree.append(hash) }
        let proof = try MerkleProof(
            leafIndex: 1, leafCount: 3,
            siblings: [MerkleHash.leaf(index: 0, chunkHash: Self.a), MerkleHash.leaf(index: 2, chunkHash: Self.c)])
        let nonce = [UInt8](repeating: 9, count: 32)
        let answer = NativeChallengeAnswer(
            answers: [
                .init(item: try Self.item(1), mac: Self.c, sha256: Self.b, proof: proof),
                .init(item: try Self.item(7, 8, 9), mac: nil, sha256: nil, proof: nil),
            ],
            nonce: nonce)
        let json = Self.text(answer.jsonBytes)
        #expect(
            json.hasPrefix(
                "{\"answers\":[{\"index\":1,\"length\":16384,\"mac\":\"\(Self.c.hex)\",\"offset\":0,\"proof\":{"
                    + "\"leafCount\":3,\"leafIndex\":1,\"siblings\":[\""
                    + MerkleHash.leaf(index: 0, chunkHash: Self.a).hex))
        #expect(json.contains("{\"index\":7,\"length\":9,\"mac\":null,\"offset\":8,\"proof\":null,\"sha256\":null}"))
        #expect(json.hasSuffix(",\"v\":2}"))
        #expect(try NativeChallengeAnswer(json: answer.jsonBytes) == answer)
        let wrongLeaf = json.replacingOccurrences(of: "\"leafIndex\":1", with: "\"leafIndex\":2")
        let leafError = #expect(throws: AetherProtocolError.self) {
            try NativeChallengeAnswer(json: Self.bytes(wrongLeaf))
        }
        #expect(leafError?.member == "answers.proof.leafIndex")
        let wrongShape = json.replacingOccurrences(of: "\"leafCount\":3", with: "\"leafCount\":2")
        let shapeError = #expect(throws: AetherProtocolError.self) {
            try NativeChallengeAnswer(json: Self.bytes(wrongShape))
        }
        #expect(shapeError?.member == "answers.proof.siblings")
        let upper = json.replacingOccurrences(of: Self.b.hex, with: Self.b.hex.uppercased())
        let hexError = #expect(throws: AetherProtocolError.self) { try NativeChallengeAnswer(json: Self.bytes(upper)) }
        #expect(hexError?.member == "answers.sha256")
        // A recorded hash without a MAC (the bytes are not read back) is refused.
        let noMAC = json.replacingOccurrences(of: "\"mac\":\"\(Self.c.hex)\"", with: "\"mac\":null")
        let noMACError = #expect(throws: AetherProtocolError.self) {
            try NativeChallengeAnswer(json: Self.bytes(noMAC))
        }
        #expect(noMACError?.code == .inconsistent)
        // The old answer (version 1: a hash and a proof, no "v") is refused, not read as one without MACs.
        let old =
            "{\"answers\":[{\"index\":1,\"proof\":null,\"sha256\":\"\(Self.b.hex)\"}],\"nonce\":"
            + "\"\(Data(nonce).base64EncodedString())\"}"
        let oldError = #expect(throws: AetherProtocolError.self) { try NativeChallengeAnswer(json: Self.bytes(old)) }
        #expect(oldError?.code == .versionUnsupported)
        #expect(oldError?.member == "v")
    }

    // MARK: Complete, receipt, problem

    @Test func completeRequestsAndReceiptsAreCanonical() throws {
        let complete = NativeCompleteRequest(chainHead: Self.a, fileSHA256: Self.b, merkleRoot: Self.c)
        #expect(
            Self.text(complete.jsonBytes)
                == "{\"chainHead\":\"\(Self.a.hex)\",\"fileSHA256\":\"\(Self.b.hex)\",\"merkleRoot\":\"\(Self.c.hex)\"}"
        )
        #expect(try NativeCompleteRequest(json: complete.jsonBytes) == complete)
        let missing = #expect(throws: AetherProtocolError.self) {
            try NativeCompleteRequest(
                json: Self.bytes("{\"chainHead\":\"\(Self.a.hex)\",\"fileSHA256\":\"\(Self.b.hex)\"}"))
        }
        #expect(missing?.member == "merkleRoot")
        let receipt = NativeReceipt(
            id: Self.id, size: 1_073_741_824, chunks: 256, fileSHA256: Self.b, merkleRoot: Self.c, chainHead: Self.a,
            cid: "bafkreiabc", completedAt: 1_796_054_400)
        #expect(
            Self.text(receipt.jsonBytes)
                == "{\"chainHead\":\"\(Self.a.hex)\",\"chunks\":256,\"cid\":\"bafkreiabc\",\"completedAt\":"
                + "\"2026-11-30T16:00:00Z\",\"fileSHA256\":\"\(Self.b.hex)\",\"id\":\"\(Self.id)\",\"merkleRoot\":"
                + "\"\(Self.c.hex)\",\"size\":1073741824}")
        #expect(try NativeReceipt(json: receipt.jsonBytes) == receipt)
        let badCID = Self.text(receipt.jsonBytes).replacingOccurrences(of: "bafkreiabc", with: "Qm!")
        let cidError = #expect(throws: AetherProtocolError.self) { try NativeReceipt(json: Self.bytes(badCID)) }
        #expect(cidError?.member == "cid")
    }

    @Test func problemsUseTheAetherURNAndLeaveOutAbsentMembers() throws {
        let problem = ProblemDocument(
            name: "duplicate-chunk", title: "Duplicate chunk", status: 409,
            detail: "chunk 5 is stored with other bytes",
            chunk: 5)
        #expect(
            Self.text(problem.jsonBytes)
                == "{\"chunk\":5,\"detail\":\"chunk 5 is stored with other bytes\",\"status\":409,"
                + "\"title\":\"Duplicate chunk\",\"type\":\"urn:aether:problem:duplicate-chunk\"}")
        #expect(try ProblemDocument(json: problem.jsonBytes) == problem)
        let other = Self.text(problem.jsonBytes).replacingOccurrences(
            of: "urn:aether:problem:", with: "https://example.com/")
        let typeError = #expect(throws: AetherProtocolError.self) { try ProblemDocument(json: Self.bytes(other)) }
        #expect(typeError?.member == "type")
        let status = Self.text(problem.jsonBytes).replacingOccurrences(of: "409", with: "200")
        let statusError = #expect(throws: AetherProtocolError.self) { try ProblemDocument(json: Self.bytes(status)) }
        #expect(statusError?.member == "status")
    }
}
