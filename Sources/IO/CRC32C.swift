/// Streaming CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of iSCSI (RFC 3720),
/// S3's `x-amz-checksum-crc32c` and ext4.
///
/// Uses the SSE4.2 `crc32` instruction when the CPU has it (three interleaved streams joined with
/// PCLMULQDQ for inputs of `interleavedThreshold` bytes or more), else a slicing table in Swift.
public struct CRC32C: Sendable, Hashable {
    private var state: UInt32 = 0xFFFF_FFFF

    /// Which implementation `update` uses.
    public enum Kernel: Sendable, Hashable {
        /// The CPU's crc32 instruction.
        case hardware
        /// Portable Swift table lookups.
        case table
    }

    /// The kernel this process uses.
    public static let kernel: Kernel = Kernels.hasSSE42 ? .hardware : .table

    /// A fresh checksum.
    public init() {}

    /// Feeds raw bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        switch Self.kernel {
        case .hardware:
            if bytes.count >= Self.interleavedThreshold && Kernels.hasPCLMUL {
                state = unsafe Kernels.crc32cInterleaved(state, bytes)
            } else {
                state = unsafe Kernels.crc32cSerial(state, bytes)
            }
        case .table: state = unsafe Self.tableUpdate(state, bytes)
        }
    }

    /// Feeds bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        unsafe array.withUnsafeBytes { unsafe update($0) }
    }

    /// The checksum of everything fed so far.
    public var value: UInt32 { ~state }

    /// One-shot CRC32C.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.value
    }

    /// Below this many bytes the single-stream loop wins: the interleaved kernel needs three 128-byte
    /// blocks before it can split, and joining the streams costs two carry-less multiplies.
    static let interleavedThreshold = 384

    /// The CRC32C of `a` followed by `b`, from the checksums of each and the length of `b`
    /// (as zlib's `crc32_combine`): lets per-chunk checksums yield the whole-file checksum (S3's
    /// full-object CRC32C) without reading the bytes twice. Runs in O(log lengthOfB).
    public static func combine(_ a: UInt32, _ b: UInt32, lengthOfB: Int) -> UInt32 {
        precondition(lengthOfB >= 0, "a length is never negative")
        // a * x^(8 * lengthOfB) mod P, by squaring: powers[k] = x^(8 * 2^k) mod P.
        var result = a
        var remaining = UInt64(lengthOfB)
        var k = 0
        while remaining != 0 {
            if remaining & 1 == 1 { result = multiplyModP(result, byteShiftPowers[k]) }
            remaining >>= 1
            k += 1
        }
        return result ^ b
    }

    // x^(8 * 2^k) mod P in the reflected representation (bit 31 is x^0), k = 0..<64.
    private static let byteShiftPowers: [UInt32] = {
        var powers: [UInt32] = []
        var power: UInt32 = 0x0080_0000  // x^8
        for _ in 0..<64 {
            powers.append(power)
            power = multiplyModP(power, power)
        }
        return powers
    }()

    // Product of two reflected polynomials modulo P (bit 31 is the coefficient of x^0).
    private static func multiplyModP(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var product: UInt32 = 0
        var multiplier = a
        var mask: UInt32 = 0x8000_0000
        while mask != 0 {
            if b & mask != 0 { product ^= multiplier }
            // multiplier *= x: a right shift, reducing by P when x^31's coefficient falls off.
            multiplier = (multiplier >> 1) ^ (0x82F6_3B78 & (0 &- (multiplier & 1)))
            mask >>= 1
        }
        return product
    }

    /// The single-stream hardware kernel (the benchmark baseline), exposed for equivalence tests.
    static func serialChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        ~(unsafe Kernels.crc32cSerial(0xFFFF_FFFF, bytes))
    }

    /// The interleaved hardware kernel at any length, exposed for equivalence tests.
    static func interleavedChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        ~(unsafe Kernels.crc32cInterleaved(0xFFFF_FFFF, bytes))
    }

    /// The portable kernel, exposed for equivalence tests and the benchmark baseline.
    public static func tableChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        ~(unsafe tableUpdate(0xFFFF_FFFF, bytes))
    }

    // Slicing-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes.
    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0x82F6_3B78 & (0 &- (crc & 1))) }
            tables[0][byte] = crc
        }
        for byte in 0..<256 {
            for k in 1..<8 {
                let previous = tables[k - 1][byte]
                tables[k][byte] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    private static func tableUpdate(_ start: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = start
        let t = tables
        var index = 0
        let count = bytes.count
        while index + 8 <= count {
            let low = unsafe bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian ^ crc
            let high = unsafe bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self).littleEndian
            crc =
                t[7][Int(low & 0xFF)] ^ t[6][Int((low >> 8) & 0xFF)] ^ t[5][Int((low >> 16) & 0xFF)]
                ^ t[4][Int(low >> 24)] ^ t[3][Int(high & 0xFF)] ^ t[2][Int((high >> 8) & 0xFF)]
                ^ t[1][Int((high >> 16) & 0xFF)] ^ t[0][Int(high >> 24)]
            index += 8
        }
        while index < count {
            crc = (crc >> 8) ^ t[0][Int((crc ^ UInt32(unsafe bytes[index])) & 0xFF)]
            index += 1
        }
        return crc
    }
}
