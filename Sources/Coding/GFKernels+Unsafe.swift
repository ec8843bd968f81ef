internal import CAetherKernels

/// Every call into the CAetherKernels C target made by AetherCoding.
enum GFKernels {
    /// caether_cpu_has_avx2, read once.
    static let hasAVX2: Bool = caether_cpu_has_avx2() == 1

    /// caether_gf_tables_size
    static func tablesSize(rows: Int, sources: Int) -> Int {
        caether_gf_tables_size(rows, sources)
    }

    /// caether_gf_build_tables: `coefficients` is row-major rows x sources; `tables` holds tablesSize bytes.
    static func buildTables(rows: Int, sources: Int, coefficients: [UInt8], into tables: UnsafeMutableRawPointer) {
        precondition(coefficients.count == rows * sources, "coefficient matrix has the wrong shape")
        unsafe coefficients.withUnsafeBufferPointer { buffer in
            unsafe caether_gf_build_tables(
                rows, sources, buffer.baseAddress, tables.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// caether_gf_dot_prod_avx2
    static func dotProductAVX2(
        length: Int, rows: Int, sources: Int, tables: UnsafeRawPointer,
        inputs: UnsafePointer<UnsafePointer<UInt8>?>, outputs: UnsafePointer<UnsafeMutablePointer<UInt8>?>
    ) {
        unsafe caether_gf_dot_prod_avx2(
            length, rows, sources, tables.assumingMemoryBound(to: UInt8.self), inputs, outputs)
    }
}
