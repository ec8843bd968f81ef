import Testing

@testable import AetherUploader

@Suite struct UploaderErrorTests {
    @Test func descriptionNamesTheCodeAndMessage() {
        let error = UploaderError(.invalidArgument, "detail")
        #expect(error.description == "UploaderError(invalidArgument): detail")
        #expect(error.location.hasPrefix("AetherUploaderTests/"))
    }

    @Test func codesAreDistinct() {
        let codes: [UploaderError.Code] = [
            .invalidArgument, .cancelled, .verificationFailed, .stateDirectoryRefused, .snapshotDamaged,
            .masterKeyDamaged, .systemCall, .unknownFeatureFlag,
        ]
        #expect(Set(codes).count == codes.count)
    }
}
