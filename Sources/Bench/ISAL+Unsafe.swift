internal import CAetherISAL

/// ISA-L erasure-coding calls for the `coding` suite's baseline.
enum ISAL {
    /// gf_gen_cauchy1_matrix: the (k + m) x k encoding matrix.
    static func cauchyMatrix(k: Int, m: Int) -> [UInt8] {
        var matrix = [UInt8](repeating: 0, count: (k + m) * k)
        unsafe matrix.withUnsafeMutableBufferPointer {
            unsafe gf_gen_cauchy1_matrix($0.baseAddress, Int32(k + m), Int32(k))
        }
        return matrix
    }

    /// gf_invert_matrix: the inverse of a size x size matrix, nil when singular.
    static func invert(_ matrix: [UInt8], size: Int) -> [UInt8]? {
        var input = matrix
        var output = [UInt8](repeating: 0, count: size * size)
        let status = unsafe input.withUnsafeMutableBufferPointer { source in
            unsafe output.withUnsafeMutableBufferPointer { target in
                unsafe gf_invert_matrix(source.baseAddress, target.baseAddress, Int32(size))
            }
        }
        return status == 0 ? output : nil
    }

    /// ec_init_tables: the 32-byte-per-coefficient tables of a rows x k matrix.
    static func initTables(k: Int, rows: Int, coefficients: [UInt8]) -> [UInt8] {
        var matrix = coefficients
        var tables = [UInt8](repeating: 0, count: 32 * k * rows)
        unsafe matrix.withUnsafeMutableBufferPointer { source in
            unsafe tables.withUnsafeMutableBufferPointer { target in
                unsafe ec_init_tables(Int32(k), Int32(rows), source.baseAddress, target.baseAddress)
            }
        }
        return tables
    }

    /// ec_encode_data: `rows` outputs from `k` inputs of `length` bytes.
    static func encodeData(
        length: Int, k: Int, rows: Int, tables: inout [UInt8], inputs: inout [UnsafeMutablePointer<UInt8>?],
        outputs: inout [UnsafeMutablePointer<UInt8>?]
    ) {
        unsafe precondition(inputs.count == k && outputs.count == rows && tables.count == 32 * k * rows, "shapes")
        unsafe tables.withUnsafeMutableBufferPointer { table in
            unsafe inputs.withUnsafeMutableBufferPointer { input in
                unsafe outputs.withUnsafeMutableBufferPointer { output in
                    unsafe ec_encode_data(
                        Int32(length), Int32(k), Int32(rows), table.baseAddress, input.baseAddress, output.baseAddress)
                }
            }
        }
    }
}
