import AetherIO
import Testing

@testable import AetherTransport

/// The size-unknown form of the native documents (`docs/PROTOCOL.md` 3.1, 3.5, 3.8): `"size":null` on create and
/// in the status document, the final `size` in the completion.
@Suite struct NativeDeferredDocumentTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func theDeferredCreateRequestIsCanonicalAndRoundTrips() throws {
        let request = NativeCreateRequest.deferred(chunkSize: 16384, chainSessionID: "s")
        #expect(Self.text(request.jsonBytes) == "{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"size\":null}")
        let parsed = try NativeCreateRequest(json: request.jsonBytes)
        #expect(parsed.sizeDeferred)
        #expect(parsed == request)
        // An absent size is still a missing member, not the deferred form.
        #expect(throws: AetherProtocolError.self) {
            try NativeCreateRequest(json: Array("{\"chainSessionID\":\"s\",\"chunkSize\":16384}".utf8))
        }
    }

    @Test(arguments: [
        "{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"chunks\":2,\"size\":null}",
        "{\"chainSessionID\":\"s\",\"chunkSize\":16385,\"size\":null}",
        "{\"chainSessionID\":\"s\",\"chunkSize\":16384,\"parity\":{\"code\":\"rs8\",\"data\":2,\"parity\":1},\"size\":null}",
        "{\"chainSessionID\":\"\",\"chunkSize\":16384,\"size\":null}",
    ])
    func aDeferredCreateRequestWithChunksParityOrABadLayoutIsRefused(_ json: String) {
        #expect(throws: AetherProtocolError.self) { try NativeCreateRequest(json: Array(json.utf8)) }
    }

    @Test func theStatusDocumentCarriesANullSizeAndTheStoredExtent() throws {
        var document = NativeStatusDocument(
            id: "abcdefghijklmnopqrstuvwxyz", size: 0, chunkSize: 16384, chunks: 3,
            received: ChunkBitmap(count: 3, set: [0, 2]), chainVerifiedThrough: 0, expires: 1_800_000_000,
            state: .open)
        document.sizeDeferred = true
        let text = Self.text(document.jsonBytes)
        #expect(text.contains("\"size\":null"))
        let parsed = try NativeStatusDocument(json: document.jsonBytes)
        #expect(parsed.sizeDeferred)
        #expect(parsed.chunks == 3)
        #expect(parsed.received.setIndices == [0, 2])
        // Nothing stored yet: zero chunks, an empty bitmap.
        var empty = document
        empty.chunks = 0
        empty.received = ChunkBitmap(count: 0, set: [])
        empty.chainVerifiedThrough = -1
        #expect(try NativeStatusDocument(json: empty.jsonBytes).chunks == 0)
        // A known size still needs chunks >= 1 and consistent.
        var known = document
        known.sizeDeferred = false
        #expect(throws: AetherProtocolError.self) { try NativeStatusDocument(json: known.jsonBytes) }
    }

    @Test func theCompletionCarriesTheFinalSizeOnlyWhenGiven() throws {
        let a = SHA256.hash(Array("a".utf8))
        let plain = NativeCompleteRequest(chainHead: a, fileSHA256: a, merkleRoot: a)
        #expect(!Self.text(plain.jsonBytes).contains("size"))
        #expect(try NativeCompleteRequest(json: plain.jsonBytes).size == nil)
        let sized = NativeCompleteRequest(chainHead: a, fileSHA256: a, merkleRoot: a, size: 123_456)
        #expect(Self.text(sized.jsonBytes).hasSuffix(",\"size\":123456}"))
        #expect(try NativeCompleteRequest(json: sized.jsonBytes) == sized)
        #expect(throws: AetherProtocolError.self) {
            try NativeCompleteRequest(
                json: Array(
                    "{\"chainHead\":\"\(a.hex)\",\"fileSHA256\":\"\(a.hex)\",\"merkleRoot\":\"\(a.hex)\",\"size\":-1}"
                        .utf8))
        }
    }
}
