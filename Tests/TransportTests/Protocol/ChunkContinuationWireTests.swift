import AetherIO
import Foundation
import Testing

@testable import AetherTransport

/// The wire of a cut chunk's continuation (`docs/PROTOCOL.md` 3.2.2): `resume-chunk` in the capabilities, `from` in a
/// run header, `Aether-Partial` on a 409, and the status document's `partials`.
@Suite struct ChunkContinuationWireTests {
    static let digests = (0..<2).map { SHA256.hash([UInt8($0)]) }
    static let id = "abcdefghijklmnopqrstuvwxyz"

    @Test func resumeChunkIsWrittenOnlyWhenTrueBeforeTheSpotCheckMembersAndAbsentIsFalse() throws {
        let plain = AetherCapabilities(maximumRun: 64)
        #expect(!plain.fieldValue.contains("resume-chunk"))
        #expect(try AetherCapabilities(parsing: plain.fieldValue).resumesChunks == false)
        let resuming = AetherCapabilities(maximumRun: 64, resumesChunks: true)
        #expect(resuming.fieldValue.hasSuffix(", max-run=64, resume-chunk, challenge-v=2, challenge-bytes=16777216"))
        #expect(try AetherCapabilities(parsing: resuming.fieldValue) == resuming)
        #expect(try AetherCapabilities(parsing: plain.fieldValue + ", resume-chunk=?0").resumesChunks == false)
        let wrong = #expect(throws: AetherProtocolError.self) {
            try AetherCapabilities(parsing: plain.fieldValue + ", resume-chunk=1")
        }
        #expect(wrong?.member == "resume-chunk")
        #expect(wrong?.code == .wrongType)
    }

    @Test func aContinuationHeaderCarriesFromAfterTheLengthAndRoundTrips() throws {
        let header = AetherRunHeader(length: 40, crc32c: [1, 2], sha256: Self.digests, from: 7)
        #expect(header.fieldValue.hasPrefix("count=2, length=40, from=7, crc32c=(:AAAAAQ==: :AAAAAg==:), sha-256=("))
        #expect(try AetherRunHeader(parsing: header.fieldValue) == header)
        #expect(header.bodyLength == 33)
        let whole = AetherRunHeader(length: 40, crc32c: [1, 2], sha256: Self.digests)
        #expect(!whole.fieldValue.contains("from"))
        #expect(try AetherRunHeader(parsing: whole.fieldValue).from == nil)
        #expect(whole.bodyLength == 40)
    }

    @Test(arguments: [
        ("from=0", "outOfRange"), ("from=40", "inconsistent"), ("from=41", "inconsistent"),
        ("from=?1", "wrongType"), ("from=-3", "outOfRange"),
    ])
    func aContinuationOutsideTheRunIsRefused(member: String, code: String) {
        let text = AetherRunHeader(length: 40, crc32c: [1, 2], sha256: Self.digests).fieldValue
            .replacingOccurrences(of: "length=40", with: "length=40, \(member)")
        let error = #expect(throws: AetherProtocolError.self) { try AetherRunHeader(parsing: text) }
        #expect(error?.member == "from")
        #expect(error?.code.description == code)
    }

    @Test func thePartialHeaderRoundTripsAndRefusesWhatItDoesNotKnow() throws {
        let header = AetherPartialHeader(index: 3, received: 524_288)
        #expect(header.fieldValue == "index=3, received=524288")
        #expect(try AetherPartialHeader(parsing: header.fieldValue) == header)
        #expect(try AetherPartialHeader(parsing: "index=0, received=0") == AetherPartialHeader(index: 0, received: 0))
        for text in [
            "index=3", "received=2", "index=3, received=2, more=1", "index=-1, received=2", "index=3, received=?1",
        ] {
            #expect(throws: AetherProtocolError.self, "\(text)") { try AetherPartialHeader(parsing: text) }
        }
    }

    static func status(partials: [NativeStatusDocument.Partial]?) -> NativeStatusDocument {
        var document = NativeStatusDocument(
            id: id, size: 100_000, chunkSize: 16_384, chunks: 7, received: ChunkBitmap(count: 7, set: [0]),
            chainVerifiedThrough: 0, expires: 1_796_126_400, state: .open)
        document.partials = partials
        return document
    }

    @Test func partialsAreListedInTheStatusDocumentOnlyWhenGivenAndRoundTrip() throws {
        let absent = Self.status(partials: nil)
        #expect(!String(decoding: absent.jsonBytes, as: UTF8.self).contains("partials"))
        #expect(try NativeStatusDocument(json: absent.jsonBytes).partials == nil)
        let empty = Self.status(partials: [])
        #expect(String(decoding: empty.jsonBytes, as: UTF8.self).contains("\"partials\":[],"))
        #expect(try NativeStatusDocument(json: empty.jsonBytes).partials == [])
        let two = Self.status(partials: [.init(index: 1, received: 5), .init(index: 6, received: 16_383)])
        #expect(String(decoding: two.jsonBytes, as: UTF8.self).contains("\"partials\":[[1,5],[6,16383]],"))
        #expect(try NativeStatusDocument(json: two.jsonBytes) == two)
    }

    @Test(arguments: [
        ("[[1,5],[1,6]]", "inconsistent"), ("[[3,5],[1,6]]", "inconsistent"), ("[[7,5]]", "outOfRange"),
        ("[[1,0]]", "outOfRange"), ("[[1,16384]]", "outOfRange"), ("[[1]]", "wrongType"), ("[[1,2,3]]", "wrongType"),
        ("[1,2]", "wrongType"), ("{}", "wrongType"), ("[[1,\"2\"]]", "wrongType"),
    ])
    func aDamagedPartialsListIsRefusedNamingIt(list: String, code: String) {
        let json = String(decoding: Self.status(partials: []).jsonBytes, as: UTF8.self)
            .replacingOccurrences(of: "\"partials\":[]", with: "\"partials\":\(list)")
        let error = #expect(throws: AetherProtocolError.self) { try NativeStatusDocument(json: Array(json.utf8)) }
        #expect(error?.member == "partials")
        #expect(error?.code.description == code)
    }

    @Test func moreThanTheBoundOfPartialsIsRefused() throws {
        var document = Self.status(partials: nil)
        document.size = 1 << 30
        document.chunks = 65_536
        document.received = ChunkBitmap(count: 65_536)
        document.chainVerifiedThrough = -1
        document.partials = (0..<AetherWire.maximumPartials).map { .init(index: $0, received: 1) }
        #expect(try NativeStatusDocument(json: document.jsonBytes).partials?.count == AetherWire.maximumPartials)
        document.partials?.append(.init(index: AetherWire.maximumPartials, received: 1))
        let error = #expect(throws: AetherProtocolError.self) { try NativeStatusDocument(json: document.jsonBytes) }
        #expect(error?.code == .tooLarge)
    }

    @Test func aBodyDropsItsFirstBytesAcrossPiecesAndAStreamCannot() throws {
        let body = HTTPRequestBody(storage: .pieces([.bytes([1, 2, 3]), .bytes([4, 5]), .bytes([6])], length: 6))
        for count in 0...6 {
            let rest = try #require(body.droppingFirst(Int64(count)))
            #expect(rest.heldBytes == Array([1, 2, 3, 4, 5, 6].dropFirst(count)), "\(count)")
            #expect(rest.length == Int64(6 - count))
        }
        #expect(body.droppingFirst(7) == nil)
        #expect(body.droppingFirst(-1) == nil)
        let stream = HTTPRequestBody.stream(HTTPBodyStream(length: 4, capacity: 4))
        #expect(stream.droppingFirst(1) == nil)
    }

    @Test func aBodyOfTheFileReadersChunksDropsItsFirstBytes() throws {
        let content = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aether-drop-\(UUID().uuidString)")
        try Data(content).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let reader = try FileChunkReader(
            path: FilePath(path.path), options: ChunkReadOptions(chunkSize: 16_384, strategy: .pread, heldChunks: 4))
        var chunks: [Chunk] = []
        while let chunk = try reader.next() { chunks.append(chunk) }
        let body = HTTPRequestBody.chunks(chunks)
        for count in [0, 1, 16_383, 16_384, 20_000, 49_999, 50_000] {
            #expect(try #require(body.droppingFirst(Int64(count))).heldBytes == Array(content.dropFirst(count)))
        }
    }
}
