internal import CAetherKernels

/// Every call into the CAetherKernels C target made by AetherIO.
enum Kernels {
    /// caether_cpu_has_sse42, read once.
    static let hasSSE42: Bool = caether_cpu_has_sse42() == 1

    /// caether_cpu_has_pclmul, read once: the interleaved CRC32C kernel needs it.
    static let hasPCLMUL: Bool = caether_cpu_has_pclmul() == 1

    /// caether_crc32c_hw_serial
    static func crc32cSerial(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress else { return crc }
        return unsafe caether_crc32c_hw_serial(crc, base, bytes.count)
    }

    /// caether_crc32c_hw_interleaved
    static func crc32cInterleaved(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress else { return crc }
        return unsafe caether_crc32c_hw_interleaved(crc, base, bytes.count)
    }
}
