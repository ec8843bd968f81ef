import Testing

@testable import AetherTransport

@Suite struct TransportErrorTests {
    @Test func descriptionNamesTheCodeAndMessage() {
        let error = TransportError(.timedOut, "detail")
        #expect(error.description == "TransportError(timedOut): detail")
        #expect(error.location.hasPrefix("AetherTransportTests/"))
    }

    @Test func codesAreDistinct() {
        let codes: [TransportError.Code] = [
            .timedOut, .refused, .protocolViolation, .systemCall, .invalidArgument, .notConnected, .unknownKey,
            .cancelled, .hostNotFound, .connectionRefused, .connectionClosed, .tlsHandshakeFailed,
            .certificateRejected, .pinMismatch, .headerTooLarge, .responseTooLarge, .bodySourceFailed,
            .credentialsUnavailable, .accessDenied, .remoteRejected, .gone, .throttled, .serverFailed, .conflict,
            .versionUnsupported, .tooLarge, .checksumMismatch, .protocolUnsupported, .verificationFailed,
            .receiptMismatch,
        ]
        #expect(Set(codes).count == codes.count)
    }
}
