import Testing

@testable import AetherScheduling

@Suite struct SchedulingErrorTests {
    @Test func descriptionNamesTheCodeAndMessage() {
        let error = SchedulingError(.invalidArgument, "detail")
        #expect(error.description == "SchedulingError(invalidArgument): detail")
        #expect(error.location.hasPrefix("AetherSchedulingTests/"))
    }

    @Test func codesAreDistinct() {
        let codes: [SchedulingError.Code] = [.invalidArgument, .invalidConstant, .circuitOpen, .unreadableSource]
        #expect(Set(codes).count == codes.count)
    }
}
