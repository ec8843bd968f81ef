/// A fixed coefficient matrix (rows x sources) applied to byte regions: output r = sum over j of
/// c(r, j) * input j, symbol by symbol. The encoder holds one for the parity rows, a decoder one for the
/// rows that rebuild its missing shards. Everything is precomputed at init, so `apply` allocates nothing.
@safe final class RegionTransform: @unchecked Sendable {
    // @unchecked: the SIMD tables are written once in init and only read afterwards.

    /// Output regions.
    let rows: Int
    /// Input regions.
    let sources: Int
    /// The field the coefficients live in.
    let field: ReedSolomonField
    /// Whether `apply` runs the AVX2 kernel (else the portable Swift one).
    let usesSIMD: Bool

    private let coefficients256: [UInt8]
    private let logCoefficients65536: [Int]  // -1 for a zero coefficient
    private let tables: UnsafeMutableRawPointer?

    /// A GF(2^8) transform.
    init(_ matrix: GFMatrix<GF256>, kernel: ReedSolomonKernel) {
        rows = matrix.rows
        sources = matrix.columns
        field = .gf256
        coefficients256 = matrix.elements
        logCoefficients65536 = []
        usesSIMD = kernel == .automatic && GFKernels.hasAVX2 && rows > 0 && sources > 0
        if usesSIMD {
            // 64-byte alignment: the kernel loads each 32-byte table half with an aligned load.
            let size = GFKernels.tablesSize(rows: rows, sources: sources)
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
            unsafe GFKernels.buildTables(rows: rows, sources: sources, coefficients: coefficients256, into: buffer)
            unsafe tables = buffer
        } else {
            unsafe tables = nil
        }
    }

    /// A GF(2^16) transform (portable kernel only).
    init(_ matrix: GFMatrix<GF65536>) {
        rows = matrix.rows
        sources = matrix.columns
        field = .gf65536
        coefficients256 = []
        logCoefficients65536 = matrix.elements.map { $0 == 0 ? -1 : Int(GF65536.logTable[Int($0)]) }
        usesSIMD = false
        unsafe tables = nil
    }

    deinit {
        unsafe tables?.deallocate()
    }

    /// Writes all `rows` outputs from the `sources` inputs over `length` bytes. The pointer arrays hold
    /// `sources` and `rows` valid pointers to regions of at least `length` bytes; outputs must not overlap
    /// inputs. For GF(2^16) `length` is even.
    func apply(
        length: Int, inputs: UnsafePointer<UnsafePointer<UInt8>?>, outputs: UnsafePointer<UnsafeMutablePointer<UInt8>?>
    ) {
        guard rows > 0, length > 0 else { return }
        if let tables = unsafe tables {
            unsafe GFKernels.dotProductAVX2(
                length: length, rows: rows, sources: sources, tables: tables, inputs: inputs, outputs: outputs)
            return
        }
        switch field {
        case .gf256: unsafe applyPortable256(length: length, inputs: inputs, outputs: outputs)
        case .gf65536: unsafe applyPortable65536(length: length, inputs: inputs, outputs: outputs)
        }
    }

    /// Blocks of 4 KiB keep each output block in L1 while every input is folded into it.
    private static let block = 4096

    private func applyPortable256(
        length: Int, inputs: UnsafePointer<UnsafePointer<UInt8>?>, outputs: UnsafePointer<UnsafeMutablePointer<UInt8>?>
    ) {
        unsafe GF256.productTable.withUnsafeBufferPointer { products in
            guard let productBase = products.baseAddress else { return }
            var start = 0
            while start < length {
                let count = min(Self.block, length - start)
                for row in 0..<rows {
                    guard let output = unsafe outputs[row] else { continue }
                    let out = unsafe output + start
                    for source in 0..<sources {
                        guard let input = unsafe inputs[source] else { continue }
                        let inp = unsafe input + start
                        let table = unsafe productBase + Int(coefficients256[row * sources + source]) << 8
                        if source == 0 {
                            for index in 0..<count { unsafe out[index] = table[Int(inp[index])] }
                        } else {
                            for index in 0..<count { unsafe out[index] ^= table[Int(inp[index])] }
                        }
                    }
                }
                start += count
            }
        }
    }

    private func applyPortable65536(
        length: Int, inputs: UnsafePointer<UnsafePointer<UInt8>?>, outputs: UnsafePointer<UnsafeMutablePointer<UInt8>?>
    ) {
        let symbols = length / 2
        unsafe GF65536.logTable.withUnsafeBufferPointer { logs in
            unsafe GF65536.expTable.withUnsafeBufferPointer { exps in
                for row in 0..<rows {
                    guard let output = unsafe outputs[row] else { continue }
                    let out = UnsafeMutableRawPointer(output)
                    for index in 0..<length { unsafe output[index] = 0 }
                    for source in 0..<sources {
                        let logC = logCoefficients65536[row * sources + source]
                        guard logC >= 0, let input = unsafe inputs[source] else { continue }
                        let inp = unsafe UnsafeRawPointer(input)
                        for symbol in 0..<symbols {
                            let value = UInt16(
                                littleEndian: unsafe inp.loadUnaligned(fromByteOffset: 2 * symbol, as: UInt16.self))
                            guard value != 0 else { continue }
                            let product = unsafe exps[Int(logs[Int(value)]) + logC]
                            let old = UInt16(
                                littleEndian: unsafe out.loadUnaligned(fromByteOffset: 2 * symbol, as: UInt16.self))
                            unsafe out.storeBytes(
                                of: (old ^ product).littleEndian, toByteOffset: 2 * symbol, as: UInt16.self)
                        }
                    }
                }
            }
        }
    }
}
