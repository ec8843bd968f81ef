import Testing

@testable import AetherIntegrity

@Suite struct IntegrityErrorTests {
    @Test func descriptionNamesTheCodeAndMessage() {
        let error = IntegrityError(.digestMismatch, "detail")
        #expect(error.description == "IntegrityError(digestMismatch): detail")
        #expect(error.location.hasPrefix("AetherIntegrityTests/"))
    }

    @Test func codesAreDistinct() {
        let codes: [IntegrityError.Code] = [
            .digestMismatch, .malformedProof, .chainBroken, .malformedManifest, .malformedIdentifier, .replayDetected,
            .invalidArgument,
        ]
        #expect(Set(codes).count == codes.count)
    }
}
