import Testing

@testable import AetherCoding

@Suite struct CodingErrorTests {
    @Test func descriptionNamesTheCodeAndMessage() {
        let error = CodingError(.invalidParameters, "detail")
        #expect(error.description == "CodingError(invalidParameters): detail")
        #expect(error.location.hasPrefix("AetherCodingTests/"))
    }

    @Test func codesAreDistinct() {
        let codes: [CodingError.Code] = [
            .invalidParameters, .tooFewShards, .shardSizeMismatch, .singularMatrix, .malformedIndex,
            .verificationFailed, .fileSystem,
        ]
        #expect(Set(codes).count == codes.count)
    }
}
