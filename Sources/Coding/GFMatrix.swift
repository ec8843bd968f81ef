/// A dense matrix over a Galois field, row-major.
struct GFMatrix<Field: GaloisField>: Sendable, Equatable {
    /// Number of rows.
    let rows: Int
    /// Number of columns.
    let columns: Int
    /// The entries, row after row.
    private(set) var elements: [Field.Element]

    /// The zero matrix.
    init(rows: Int, columns: Int) {
        self.rows = rows
        self.columns = columns
        elements = Array(repeating: 0, count: rows * columns)
    }

    /// The identity matrix of order `size`.
    static func identity(_ size: Int) -> GFMatrix {
        var matrix = GFMatrix(rows: size, columns: size)
        for index in 0..<size { matrix[index, index] = 1 }
        return matrix
    }

    /// The systematic encoding matrix of an RS code with `dataShards` = k and `totalShards` = n,
    /// built the way ISA-L's `gf_gen_cauchy1_matrix(a, n, k)` builds it:
    ///
    ///     rows 0..<k:   the k x k identity (data shards are stored as they are)
    ///     rows k..<n:   entry (i, j) = 1 / (i XOR j)   for i in k..<n, j in 0..<k
    ///
    /// In characteristic 2, i XOR j is the field sum x_i + y_j of the distinct points x_i = i and
    /// y_j = j, so the parity rows form a Cauchy matrix: every square submatrix is invertible, hence
    /// any k of the n rows are independent and the code is MDS. Keeping ISA-L's exact construction
    /// (same points, same field) is what makes the parity byte-identical to `ec_encode_data`.
    static func cauchyEncoding(dataShards k: Int, totalShards n: Int) -> GFMatrix {
        var matrix = GFMatrix(rows: n, columns: k)
        for index in 0..<k { matrix[index, index] = 1 }
        for row in k..<n {
            for column in 0..<k {
                matrix[row, column] = Field.inverse(Field.Element(row ^ column))
            }
        }
        return matrix
    }

    /// The entry at `row`, `column`.
    subscript(row: Int, column: Int) -> Field.Element {
        get { elements[row * columns + column] }
        set { elements[row * columns + column] = newValue }
    }

    /// The matrix made of the given rows, in the given order.
    func selectingRows(_ indices: some Sequence<Int>) -> GFMatrix {
        var picked: [Field.Element] = []
        var count = 0
        for row in indices {
            picked.append(contentsOf: elements[row * columns..<(row + 1) * columns])
            count += 1
        }
        var matrix = GFMatrix(rows: count, columns: columns)
        matrix.elements = picked
        return matrix
    }

    /// The product self x other.
    func multiplied(by other: GFMatrix) -> GFMatrix {
        precondition(columns == other.rows, "matrix shapes do not chain")
        var product = GFMatrix(rows: rows, columns: other.columns)
        for row in 0..<rows {
            for inner in 0..<columns {
                let factor = self[row, inner]
                if factor == 0 { continue }
                for column in 0..<other.columns {
                    product[row, column] ^= Field.multiply(factor, other[inner, column])
                }
            }
        }
        return product
    }

    /// The inverse, by Gauss-Jordan elimination; a singular matrix is a typed error.
    func inverted() throws(CodingError) -> GFMatrix {
        precondition(rows == columns, "only square matrices have inverses")
        let size = rows
        var work = self
        var inverse = GFMatrix.identity(size)
        for column in 0..<size {
            guard let pivot = (column..<size).first(where: { work[$0, column] != 0 }) else {
                throw CodingError(.singularMatrix, "the surviving shards' rows are not independent")
            }
            if pivot != column {
                work.swapRows(pivot, column)
                inverse.swapRows(pivot, column)
            }
            let scale = Field.inverse(work[column, column])
            work.scaleRow(column, by: scale)
            inverse.scaleRow(column, by: scale)
            for row in 0..<size where row != column {
                let factor = work[row, column]
                if factor == 0 { continue }
                work.addRow(column, times: factor, to: row)
                inverse.addRow(column, times: factor, to: row)
            }
        }
        return inverse
    }

    private mutating func swapRows(_ a: Int, _ b: Int) {
        for column in 0..<columns { elements.swapAt(a * columns + column, b * columns + column) }
    }

    private mutating func scaleRow(_ row: Int, by factor: Field.Element) {
        for column in 0..<columns { self[row, column] = Field.multiply(self[row, column], factor) }
    }

    private mutating func addRow(_ source: Int, times factor: Field.Element, to target: Int) {
        for column in 0..<columns { self[target, column] ^= Field.multiply(factor, self[source, column]) }
    }
}
