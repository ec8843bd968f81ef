import AetherReceiver
import Testing

@Suite struct ReceiverErrorTests {
    @Test func everyCodeNamesItsProblemAndStatus() {
        let codes: [(ReceiverError.Code, String, Int)] = [
            (.malformedRequest, "malformed-request", 400), (.unknownProtocol, "unknown-protocol", 400),
            (.unauthorized, "unauthorized", 401), (.notFound, "not-found", 404),
            (.offsetMismatch, "offset-mismatch", 409), (.duplicateChunk, "duplicate-chunk", 409),
            (.expired, "expired", 410), (.tooLarge, "too-large", 413), (.digestMismatch, "digest-mismatch", 422),
            (.chainBroken, "chain-broken", 422), (.merkleMismatch, "merkle-mismatch", 422),
            (.storageFailed, "storage-failed", 507),
        ]
        for (code, name, status) in codes {
            #expect(code.name == name)
            #expect(code.status == status)
        }
        #expect(Set(codes.map(\.0)).count == codes.count)
    }

    @Test func theDescriptionCarriesCodeAndMessageAndTheChunk() {
        let error = ReceiverError(.duplicateChunk, "chunk 5 is stored with other bytes", chunk: 5)
        #expect(error.description == "ReceiverError(duplicate-chunk): chunk 5 is stored with other bytes")
        #expect(error.chunk == 5)
        #expect(error.location.hasPrefix("AetherReceiverTests/"))
    }
}
