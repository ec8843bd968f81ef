import Testing

@testable import AetherSecurity

@Suite struct SecurityErrorTests {
    @Test func descriptionNamesTheCodeAndMessage() {
        let error = SecurityError(.authenticationFailed, "detail")
        #expect(error.description == "SecurityError(authenticationFailed): detail")
        #expect(error.location.hasPrefix("AetherSecurityTests/"))
    }

    @Test func codesAreDistinct() {
        let codes: [SecurityError.Code] = [
            .authenticationFailed, .invalidKey, .malformedMessage, .pinMismatch, .invalidPinUpdate, .keyStoreDamaged,
            .keyRingFull, .expired, .replayDetected, .limitExceeded, .systemCall,
        ]
        #expect(Set(codes).count == codes.count)
    }
}
