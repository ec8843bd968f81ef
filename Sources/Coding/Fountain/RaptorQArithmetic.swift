/// GF(256) region operations for RaptorQ symbols and dense matrix rows, on the AVX2 split-nibble kernel
/// of CAetherKernels when the CPU has it (RFC 6330's octet field is the 0x11D field of `GF256`).
///
/// The nibble tables of every coefficient are built once, so a row operation allocates nothing.
@safe final class RaptorQArithmetic: @unchecked Sendable {
    // @unchecked: the tables are written once in init and only read afterwards.

    /// The process-wide instance.
    static let shared = RaptorQArithmetic()

    private let usesSIMD: Bool
    /// For each c, the 64-byte tables of c alone (for `scale`).
    private let scaleTables: UnsafeMutableRawPointer
    /// For each c, the tables of the pair (1, c) back to back (for `multiplyAdd`: dst = 1 * dst + c * src).
    private let pairTables: UnsafeMutableRawPointer

    private init() {
        usesSIMD = GFKernels.hasAVX2
        let entry = GFKernels.tablesSize(rows: 1, sources: 1)
        unsafe scaleTables = UnsafeMutableRawPointer.allocate(byteCount: 256 * entry, alignment: 64)
        unsafe pairTables = UnsafeMutableRawPointer.allocate(byteCount: 256 * 2 * entry, alignment: 64)
        for c in 0..<256 {
            unsafe GFKernels.buildTables(
                rows: 1, sources: 1, coefficients: [UInt8(c)], into: scaleTables + c * entry)
            unsafe GFKernels.buildTables(
                rows: 1, sources: 2, coefficients: [1, UInt8(c)], into: pairTables + c * 2 * entry)
        }
    }

    deinit {
        unsafe scaleTables.deallocate()
        unsafe pairTables.deallocate()
    }

    /// dst ^= src over `count` bytes, 32 bytes a step in four 64-bit words.
    @inline(__always)
    static func add(_ dst: UnsafeMutablePointer<UInt8>, _ src: UnsafePointer<UInt8>, count: Int) {
        let d = UnsafeMutableRawPointer(dst)
        let s = unsafe UnsafeRawPointer(src)
        var offset = 0
        while offset + 32 <= count {
            let a0 = unsafe d.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let a1 = unsafe d.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
            let a2 = unsafe d.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self)
            let a3 = unsafe d.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)
            let b0 = unsafe s.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let b1 = unsafe s.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
            let b2 = unsafe s.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self)
            let b3 = unsafe s.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)
            unsafe d.storeBytes(of: a0 ^ b0, toByteOffset: offset, as: UInt64.self)
            unsafe d.storeBytes(of: a1 ^ b1, toByteOffset: offset + 8, as: UInt64.self)
            unsafe d.storeBytes(of: a2 ^ b2, toByteOffset: offset + 16, as: UInt64.self)
            unsafe d.storeBytes(of: a3 ^ b3, toByteOffset: offset + 24, as: UInt64.self)
            offset += 32
        }
        while offset + 8 <= count {
            let value =
                unsafe d.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                ^ s.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            unsafe d.storeBytes(of: value, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < count {
            unsafe dst[offset] ^= src[offset]
            offset += 1
        }
    }

    /// dst = sources[0] ^ ... ^ sources[n - 1] over `count` bytes (zero when n is 0), 64 bytes a step with every
    /// source read in the same step: the destination is written once instead of once per source, and the
    /// sources' cache misses (they lie all over the L symbols) overlap instead of queueing one symbol at a time.
    static func xorSum(
        _ dst: UnsafeMutablePointer<UInt8>, _ sources: UnsafePointer<UnsafePointer<UInt8>>, _ n: Int, count: Int
    ) {
        if n == 0 {
            unsafe dst.update(repeating: 0, count: count)
            return
        }
        let d = UnsafeMutableRawPointer(dst)
        var offset = 0
        while offset + 64 <= count {
            let first = unsafe UnsafeRawPointer(sources[0]) + offset
            var a0 = unsafe first.loadUnaligned(fromByteOffset: 0, as: SIMD2<UInt64>.self)
            var a1 = unsafe first.loadUnaligned(fromByteOffset: 16, as: SIMD2<UInt64>.self)
            var a2 = unsafe first.loadUnaligned(fromByteOffset: 32, as: SIMD2<UInt64>.self)
            var a3 = unsafe first.loadUnaligned(fromByteOffset: 48, as: SIMD2<UInt64>.self)
            var index = 1
            while index < n {
                let source = unsafe UnsafeRawPointer(sources[index]) + offset
                a0 ^= unsafe source.loadUnaligned(fromByteOffset: 0, as: SIMD2<UInt64>.self)
                a1 ^= unsafe source.loadUnaligned(fromByteOffset: 16, as: SIMD2<UInt64>.self)
                a2 ^= unsafe source.loadUnaligned(fromByteOffset: 32, as: SIMD2<UInt64>.self)
                a3 ^= unsafe source.loadUnaligned(fromByteOffset: 48, as: SIMD2<UInt64>.self)
                index += 1
            }
            unsafe d.storeBytes(of: a0, toByteOffset: offset, as: SIMD2<UInt64>.self)
            unsafe d.storeBytes(of: a1, toByteOffset: offset + 16, as: SIMD2<UInt64>.self)
            unsafe d.storeBytes(of: a2, toByteOffset: offset + 32, as: SIMD2<UInt64>.self)
            unsafe d.storeBytes(of: a3, toByteOffset: offset + 48, as: SIMD2<UInt64>.self)
            offset += 64
        }
        while offset < count {
            var value = unsafe sources[0][offset]
            for index in 1..<n { value ^= unsafe sources[index][offset] }
            unsafe dst[offset] = value
            offset += 1
        }
    }

    /// dst ^= c * src over `count` bytes.
    func multiplyAdd(_ dst: UnsafeMutablePointer<UInt8>, _ src: UnsafePointer<UInt8>, _ c: UInt8, count: Int) {
        if c == 0 || count == 0 { return }
        if c == 1 {
            unsafe Self.add(dst, src, count: count)
            return
        }
        if usesSIMD && count >= 32 {
            // The kernel reads each block of every source before it writes that block of the output, so the
            // output may be the first source.
            let inputs: (UnsafePointer<UInt8>?, UnsafePointer<UInt8>?) = unsafe (UnsafePointer(dst), src)
            var outputs: UnsafeMutablePointer<UInt8>? = unsafe dst
            let tables = unsafe UnsafeRawPointer(pairTables + Int(c) * 128)
            unsafe withUnsafePointer(to: inputs) { pair in
                unsafe pair.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 2) { sources in
                    unsafe withUnsafePointer(to: &outputs) { output in
                        unsafe GFKernels.dotProductAVX2(
                            length: count, rows: 1, sources: 2, tables: tables, inputs: sources, outputs: output)
                    }
                }
            }
            return
        }
        unsafe GF256.productTable.withUnsafeBufferPointer { products in
            guard let base = products.baseAddress else { return }
            let row = unsafe base + Int(c) << 8
            for index in 0..<count { unsafe dst[index] ^= row[Int(src[index])] }
        }
    }

    /// dst = c * dst over `count` bytes.
    func scale(_ dst: UnsafeMutablePointer<UInt8>, _ c: UInt8, count: Int) {
        if c == 1 || count == 0 { return }
        if c == 0 {
            unsafe dst.update(repeating: 0, count: count)
            return
        }
        if usesSIMD && count >= 32 {
            var input: UnsafePointer<UInt8>? = unsafe UnsafePointer(dst)
            var output: UnsafeMutablePointer<UInt8>? = unsafe dst
            let tables = unsafe UnsafeRawPointer(scaleTables + Int(c) * 64)
            unsafe withUnsafePointer(to: &input) { source in
                unsafe withUnsafePointer(to: &output) { out in
                    unsafe GFKernels.dotProductAVX2(
                        length: count, rows: 1, sources: 1, tables: tables, inputs: source, outputs: out)
                }
            }
            return
        }
        unsafe GF256.productTable.withUnsafeBufferPointer { products in
            guard let base = products.baseAddress else { return }
            let row = unsafe base + Int(c) << 8
            for index in 0..<count { unsafe dst[index] = row[Int(dst[index])] }
        }
    }
}
