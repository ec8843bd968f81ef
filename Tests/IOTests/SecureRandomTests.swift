import Testing

@testable import AetherIO

@Suite struct SecureRandomTests {
    @Test func aFailedLibraryInitialisationStopsTheProcessInsteadOfReturningBytes() async {
        await #expect(processExitsWith: .failure) {
            var buffer = [UInt8](repeating: 0, count: 32)
            unsafe buffer.withUnsafeMutableBytes { unsafe Sodium.randomBytes($0, libraryReady: false) }
        }
        await #expect(processExitsWith: .failure) { _ = Sodium.randomUniform(10, libraryReady: false) }
    }

    @Test func anEmptyRequestStillChecksTheLibrary() async {
        await #expect(processExitsWith: .failure) {
            var buffer: [UInt8] = []
            unsafe buffer.withUnsafeMutableBytes { unsafe Sodium.randomBytes($0, libraryReady: false) }
        }
    }

    @Test func aReadyLibraryFillsTheWholeBuffer() {
        // Either half still all zero after the fill would happen with probability 2^-256.
        var buffer = [UInt8](repeating: 0, count: 64)
        unsafe buffer.withUnsafeMutableBytes { unsafe Sodium.randomBytes($0, libraryReady: true) }
        #expect(buffer.prefix(32).contains { $0 != 0 })
        #expect(buffer.suffix(32).contains { $0 != 0 })
        #expect(Sodium.isReady)
        #expect(SecureRandom.bytes(48) != SecureRandom.bytes(48))
    }
}
