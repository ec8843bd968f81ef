/// Savitzky-Golay smoothing coefficients (Savitzky and Golay, Analytical Chemistry 36(8), 1964), derived here
/// by least squares rather than typed from a table: fit a polynomial of degree `order` to `window` equally
/// spaced samples at x = -m...m (window = 2m + 1) and read the fit at `position`; the value there is
/// `sum(coefficients[k] * sample[k])`.
public struct SavitzkyGolay: Sendable, Equatable {
    /// The weights, oldest sample first.
    public let coefficients: [Double]

    /// The filter for `window` samples (odd, >= 3), degree `order` (< window) read at `position` (-m...m; 0 is
    /// the centre, m the newest sample). Invalid shapes throw `.invalidArgument`.
    public init(window: Int, order: Int, position: Int) throws(UploaderError) {
        guard window >= 3, window % 2 == 1, window <= 101, order >= 0, order < window else {
            throw UploaderError(.invalidArgument, "a Savitzky-Golay window is odd, 3...101, and above the order")
        }
        let half = window / 2
        guard (-half...half).contains(position) else {
            throw UploaderError(.invalidArgument, "the evaluation position lies inside the window")
        }
        let xs = (-half...half).map(Double.init)
        let size = order + 1
        // Normal equations G a = e(position), G[i][j] = sum x^(i+j); then c_k = sum_j a_j x_k^j.
        var gram = [[Double]](repeating: [Double](repeating: 0, count: size), count: size)
        for i in 0..<size {
            for j in 0..<size { gram[i][j] = xs.reduce(0) { $0 + Self.power($1, i + j) } }
        }
        let e = (0..<size).map { Self.power(Double(position), $0) }
        let a = Self.solve(gram, e)
        coefficients = xs.map { x in (0..<size).reduce(0) { $0 + a[$1] * Self.power(x, $1) } }
    }

    /// The display filter of the progress tracker: window 7, order 2, read at the newest sample (a causal
    /// filter: no lag on a linear or quadratic trend).
    public static let display: SavitzkyGolay = {
        // Window 7, order 2 and position 3 are valid, so this cannot throw.
        (try? SavitzkyGolay(window: 7, order: 2, position: 3)) ?? SavitzkyGolay(coefficients: [0, 0, 0, 0, 0, 0, 1])
    }()

    private init(coefficients: [Double]) { self.coefficients = coefficients }

    /// The smoothed value of `samples` (exactly `coefficients.count` of them, oldest first); nil otherwise.
    public func apply(_ samples: some Collection<Double>) -> Double? {
        guard samples.count == coefficients.count else { return nil }
        return zip(coefficients, samples).reduce(0) { $0 + $1.0 * $1.1 }
    }

    private static func power(_ x: Double, _ n: Int) -> Double {
        var result = 1.0
        for _ in 0..<n { result *= x }
        return result
    }

    /// Gaussian elimination with partial pivoting; the Gram matrix of distinct points is positive definite.
    private static func solve(_ matrix: [[Double]], _ rhs: [Double]) -> [Double] {
        var m = matrix
        var b = rhs
        let n = b.count
        for column in 0..<n {
            var pivot = column
            for row in column..<n where abs(m[row][column]) > abs(m[pivot][column]) { pivot = row }
            m.swapAt(column, pivot)
            b.swapAt(column, pivot)
            for row in (column + 1)..<n where m[column][column] != 0 {
                let factor = m[row][column] / m[column][column]
                for k in column..<n { m[row][k] -= factor * m[column][k] }
                b[row] -= factor * b[column]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var sum = b[row]
            for k in (row + 1)..<n { sum -= m[row][k] * x[k] }
            x[row] = m[row][row] != 0 ? sum / m[row][row] : 0
        }
        return x
    }
}
