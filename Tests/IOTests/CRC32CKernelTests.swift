import Testing

@testable import AetherIO

@Suite struct CRC32CKernelTests {
    static let awkwardLengths = [
        0, 1, 2, 7, 8, 9, 15, 63, 127, 128, 129, 383, 384, 385, 767, 3071, 3072, 3073, 3 * 1024 + 5, 24_575, 24_576,
        24_577, 65_537, 100_003, 1_048_575, 1_048_576, 1_048_577,
    ]

    @Test(arguments: awkwardLengths) func everyKernelEqualsTheTableKernel(length: Int) {
        let data = SecureRandom.bytes(length + 7)
        // Start at every alignment 0...7 so the kernels' unaligned loads are exercised.
        for shift in [0, 1, 3, 7] {
            let slice = Array(data[shift..<(shift + length)])
            unsafe slice.withUnsafeBytes { raw in
                let table = unsafe CRC32C.tableChecksum(raw)
                #expect(unsafe CRC32C.serialChecksum(raw) == table, "serial, length \(length)")
                #expect(unsafe CRC32C.interleavedChecksum(raw) == table, "interleaved, length \(length)")
                var crc = CRC32C()
                unsafe crc.update(raw)
                #expect(crc.value == table, "update, length \(length)")
            }
        }
    }

    @Test func combiningWithANegativeLengthIsAProgrammerError() async {
        await #expect(processExitsWith: .failure) { _ = CRC32C.combine(1, 2, lengthOfB: -1) }
    }

    @Test func splitsInAnyPlaceGiveTheSameChecksum() {
        let data = SecureRandom.bytes(200_000)
        let expected = unsafe data.withUnsafeBytes { unsafe CRC32C.tableChecksum($0) }
        for split in [0, 1, 383, 384, 4096, 77_777, 199_999, 200_000] {
            var crc = CRC32C()
            crc.update(data[..<split])
            crc.update(data[split...])
            #expect(crc.value == expected, "split at \(split)")
        }
    }

    @Test func combineEqualsTheChecksumOfTheConcatenation() {
        for (a, b) in [(0, 0), (0, 5), (5, 0), (1, 1), (100, 3), (4096, 65_536), (12_345, 1_048_577)] {
            let first = SecureRandom.bytes(a)
            let second = SecureRandom.bytes(b)
            let combined = CRC32C.combine(CRC32C.checksum(first), CRC32C.checksum(second), lengthOfB: b)
            #expect(combined == CRC32C.checksum(first + second), "lengths \(a), \(b)")
        }
    }

    #if arch(x86_64)
        @Test func theHardwareKernelIsInUseOnThisMachine() {
            // The bench machine has SSE4.2 and PCLMULQDQ; a detection bug would silently fall back to the table.
            #expect(CRC32C.kernel == .hardware)
            #expect(Kernels.hasPCLMUL)
        }
    #endif
}
