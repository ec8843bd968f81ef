/// Solves A · C = D for the L intermediate symbols C of one source block (RFC 6330 section 5.4), where A
/// holds the S LDPC rows, the H HDPC rows and one LT row per known encoding symbol.
///
/// The method is inactivation decoding: the P PI columns start inactive; rows with one active column are
/// peeled (that column is solved by that row); when none is left, the row of least active degree keeps one
/// column and the others are inactivated. Every peeled column is then an affine function of the inactive
/// ones, so the remaining rows (the unused LT and LDPC rows and the HDPC rows) give a small dense system in
/// the inactive columns only, which Gaussian elimination over GF(256) solves. It succeeds exactly when A has
/// rank L, whatever order the peeling takes.
///
/// Then either back substitution in peeling order gives every C (the encoder), or, for a decoder that
/// needs only the few source symbols it did not receive, each wanted symbol is read straight off the affine
/// forms: Enc[] of its tuple is the sum of the E parts of its columns plus the inactive symbols its
/// combined bit vector selects (those few hundred symbols stay in cache), which skips the pass over all
/// L symbols.
///
/// The HDPC rows are G_HDPC = MT · GAMMA (section 5.3.3.3); their products are accumulated with
/// Y_k = alpha · Y_(k-1) + C_k, so the dense H x (K' + S) matrix is never built.
struct RaptorQSolver {
    private enum ColumnState: UInt8 { case active, pivoted, inactive }

    /// One symbol the caller wants: the encoding symbol of internal symbol id `isi`, written to `output`.
    @unsafe struct Wanted {
        /// The internal symbol id (ISI).
        let isi: UInt32
        /// T bytes to write the symbol to.
        let output: UnsafeMutablePointer<UInt8>
    }

    /// How the wanted symbols are computed.
    enum Evaluation: Sendable, Hashable {
        /// Whichever costs less (the default).
        case cheaper
        /// Read off the affine forms of their columns.
        case affineForms
        /// Back substitution over all L intermediate symbols, then Enc[].
        case backSubstitution
    }

    /// Solves for `parameters`'s intermediate symbols. Row r of the LT part is the encoding symbol with
    /// internal symbol id `isis[r]` and value `symbols[r]` (nil for an all-zero padding symbol).
    ///
    /// With `wanted` nil, writes all L symbols of `symbolSize` bytes to `intermediate`. Otherwise writes the
    /// encoding symbol of each wanted ISI to its output, and `intermediate` (L * T bytes) is scratch. Throws
    /// `.singularMatrix` when the rows do not determine C (more symbols are needed). `evaluation` picks how the
    /// wanted symbols are computed; returns the way taken (back substitution when all of C was asked for).
    @discardableResult
    static func solve(
        parameters: RaptorQBlockParameters, isis: [UInt32], symbols: [UnsafePointer<UInt8>?], symbolSize: Int,
        intermediate: UnsafeMutablePointer<UInt8>, wanted: [Wanted]? = nil, evaluation: Evaluation = .cheaper
    ) throws(CodingError) -> Evaluation {
        let arithmetic = RaptorQArithmetic.shared
        let t = symbolSize
        let kPrime = parameters.extendedSourceSymbols
        let s = parameters.ldpcSymbols
        let h = parameters.hdpcSymbols
        let w = parameters.ltSymbols
        let l = parameters.intermediateSymbols
        let p = parameters.permanentlyInactive
        let b = w - s
        let n = isis.count
        guard n + s + h >= l else { throw CodingError(.singularMatrix, "fewer rows than intermediate symbols") }

        // MARK: Sparse rows (LDPC rows 0..<S, then LT rows S..<S+N), as flat column lists.
        let sparseRows = s + n
        var rowStart = [Int](repeating: 0, count: sparseRows + 1)
        var columns: [Int] = []
        columns.reserveCapacity(s * (3 * b / max(s, 1) + 6) + n * 12)
        do {
            // LDPC: collect (row, column) pairs, then bucket them by row.
            var pairs: [(Int, Int)] = []
            pairs.reserveCapacity(3 * b + 3 * s)
            for i in 0..<b {
                let a = 1 + i / s
                var row = i % s
                pairs.append((row, i))
                row = (row + a) % s
                pairs.append((row, i))
                row = (row + a) % s
                pairs.append((row, i))
            }
            for i in 0..<s {
                pairs.append((i, b + i))
                pairs.append((i, w + i % p))
                pairs.append((i, w + (i + 1) % p))
            }
            var counts = [Int](repeating: 0, count: s + 1)
            for pair in pairs { counts[pair.0 + 1] += 1 }
            for i in 0..<s { counts[i + 1] += counts[i] }
            var ldpc = [Int](repeating: 0, count: pairs.count)
            var fill = counts
            for pair in pairs {
                ldpc[fill[pair.0]] = pair.1
                fill[pair.0] += 1
            }
            for row in 0..<s {
                rowStart[row] = columns.count
                appendDeduplicated(ldpc[counts[row]..<counts[row + 1]], to: &columns)
            }
            var scratch: [Int] = []
            scratch.reserveCapacity(64)
            for r in 0..<n {
                rowStart[s + r] = columns.count
                scratch.removeAll(keepingCapacity: true)
                RaptorQTuple(isi: isis[r], parameters: parameters).forEachColumn(parameters: parameters) {
                    scratch.append($0)
                }
                appendDeduplicated(scratch[...], to: &columns)
            }
            rowStart[sparseRows] = columns.count
        }

        // MARK: Column adjacency.
        var columnStart = [Int](repeating: 0, count: l + 1)
        for column in columns { columnStart[column + 1] += 1 }
        for c in 0..<l { columnStart[c + 1] += columnStart[c] }
        var columnRows = [Int](repeating: 0, count: columns.count)
        do {
            var fill = columnStart
            for row in 0..<sparseRows {
                for index in rowStart[row]..<rowStart[row + 1] {
                    let column = columns[index]
                    columnRows[fill[column]] = row
                    fill[column] += 1
                }
            }
        }

        // The symbols one row's XOR reads (its own, then one per other column), gathered for `xorSum`.
        var longestRow = 0
        for row in 0..<sparseRows { longestRow = max(longestRow, rowStart[row + 1] - rowStart[row]) }
        let operands = UnsafeMutablePointer<UnsafePointer<UInt8>>.allocate(capacity: longestRow + 1)
        defer { unsafe operands.deallocate() }

        // MARK: Peeling with inactivation.
        // The per-row and per-column state lives in buffers allocated once: the loops below update it about
        // once per nonzero of A, and an array's copy-on-write check on each update cost a tenth of the solve.
        var inactiveColumns: [Int] = []
        var pivotRows: [Int] = []
        var pivotColumns: [Int] = []
        pivotRows.reserveCapacity(l)
        pivotColumns.reserveCapacity(l)
        let state = UnsafeMutableBufferPointer<ColumnState>.allocate(capacity: l)
        let inactiveIndex = UnsafeMutableBufferPointer<Int>.allocate(capacity: l)
        let pivotIndex = UnsafeMutableBufferPointer<Int>.allocate(capacity: l)
        let degree = UnsafeMutableBufferPointer<Int>.allocate(capacity: sparseRows)
        let used = UnsafeMutableBufferPointer<Bool>.allocate(capacity: sparseRows)
        // Rows whose degree fell to one, as a stack (a row gets there once at most): the newest is pivoted
        // first, so a row is solved soon after the column that freed it, while that symbol is still cached.
        let queue = UnsafeMutableBufferPointer<Int>.allocate(capacity: max(sparseRows, 1))
        // Rows by degree, as a stack per degree (newest first) in one pool: a row is pushed at the start and
        // after each drop of its degree, so once per row plus once per nonzero at most.
        let poolCapacity = sparseRows + columns.count
        let poolRow = UnsafeMutableBufferPointer<Int>.allocate(capacity: max(poolCapacity, 1))
        let poolNext = UnsafeMutableBufferPointer<Int>.allocate(capacity: max(poolCapacity, 1))
        defer {
            unsafe state.deallocate()
            unsafe inactiveIndex.deallocate()
            unsafe pivotIndex.deallocate()
            unsafe degree.deallocate()
            unsafe used.deallocate()
            unsafe queue.deallocate()
            unsafe poolRow.deallocate()
            unsafe poolNext.deallocate()
        }
        unsafe state.initialize(repeating: .active)
        unsafe inactiveIndex.initialize(repeating: -1)
        unsafe pivotIndex.initialize(repeating: -1)
        unsafe used.initialize(repeating: false)
        var activeCount = w
        for c in w..<l {
            unsafe state[c] = .inactive
            unsafe inactiveIndex[c] = inactiveColumns.count
            inactiveColumns.append(c)
        }
        var maximumDegree = 0
        for row in 0..<sparseRows {
            var count = 0
            for index in rowStart[row]..<rowStart[row + 1] where columns[index] < w { count += 1 }
            unsafe degree[row] = count
            maximumDegree = max(maximumDegree, count)
        }
        var queueCount = 0
        var poolCount = 0
        var bucketHead = [Int](repeating: -1, count: maximumDegree + 1)
        func push(_ row: Int, degree d: Int) {
            if d == 1 {
                unsafe queue[queueCount] = row
                queueCount += 1
            } else if d >= 2 {
                unsafe poolRow[poolCount] = row
                unsafe poolNext[poolCount] = bucketHead[d]
                bucketHead[d] = poolCount
                poolCount += 1
            }
        }
        for row in 0..<sparseRows { unsafe push(row, degree: degree[row]) }

        func remove(column: Int) {
            activeCount -= 1
            for index in columnStart[column]..<columnStart[column + 1] {
                let row = columnRows[index]
                if unsafe used[row] { continue }
                unsafe degree[row] -= 1
                unsafe push(row, degree: degree[row])
            }
        }

        while activeCount > 0 {
            var chosen = -1
            while queueCount > 0 {
                queueCount -= 1
                let row = unsafe queue[queueCount]
                if unsafe !used[row] && degree[row] == 1 {
                    chosen = row
                    break
                }
            }
            if chosen < 0 {
                // No row of degree one: take a row of least degree and inactivate all but one of its columns.
                var d = 2
                while d <= maximumDegree && chosen < 0 {
                    while bucketHead[d] >= 0 {
                        let entry = bucketHead[d]
                        let row = unsafe poolRow[entry]
                        bucketHead[d] = unsafe poolNext[entry]
                        if unsafe !used[row] && degree[row] == d {
                            chosen = row
                            break
                        }
                    }
                    d += 1
                }
                if chosen < 0 {
                    // The active columns left appear in no unused row: they join the dense system.
                    for c in 0..<w where unsafe state[c] == .active {
                        unsafe state[c] = .inactive
                        unsafe inactiveIndex[c] = inactiveColumns.count
                        inactiveColumns.append(c)
                    }
                    activeCount = 0
                    break
                }
                var keep = true
                for index in rowStart[chosen]..<rowStart[chosen + 1] {
                    let c = columns[index]
                    guard unsafe state[c] == .active else { continue }
                    if keep {
                        keep = false
                        continue
                    }
                    unsafe state[c] = .inactive
                    unsafe inactiveIndex[c] = inactiveColumns.count
                    inactiveColumns.append(c)
                    remove(column: c)
                }
            }
            var pivotColumn = -1
            for index in rowStart[chosen]..<rowStart[chosen + 1] where unsafe state[columns[index]] == .active {
                pivotColumn = columns[index]
                break
            }
            if pivotColumn < 0 { continue }
            unsafe used[chosen] = true
            unsafe state[pivotColumn] = .pivoted
            unsafe pivotIndex[pivotColumn] = pivotRows.count
            pivotRows.append(chosen)
            pivotColumns.append(pivotColumn)
            remove(column: pivotColumn)
        }

        // MARK: The dense system's rows: the sparse rows no pivot used, then the H HDPC rows.
        let inactiveCount = inactiveColumns.count
        var remaining: [Int] = []
        let densePosition = UnsafeMutableBufferPointer<Int>.allocate(capacity: sparseRows)
        defer { unsafe densePosition.deallocate() }
        for row in 0..<sparseRows {
            if unsafe used[row] {
                unsafe densePosition[row] = -1
            } else {
                unsafe densePosition[row] = remaining.count
                remaining.append(row)
            }
        }
        let denseRows = remaining.count + h
        guard denseRows >= inactiveCount else {
            throw CodingError(.singularMatrix, "too few independent rows for the inactive columns")
        }
        let width = max(inactiveCount, 1)
        let coefficients = UnsafeMutablePointer<UInt8>.allocate(capacity: denseRows * width)
        let values = UnsafeMutablePointer<UInt8>.allocate(capacity: denseRows * t)
        defer {
            unsafe coefficients.deallocate()
            unsafe values.deallocate()
        }
        unsafe coefficients.update(repeating: 0, count: denseRows * width)
        unsafe values.update(repeating: 0, count: denseRows * t)
        for (position, row) in remaining.enumerated() where row >= s {
            if let symbol = unsafe symbols[row - s] { unsafe (values + position * t).update(from: symbol, count: t) }
        }

        // MARK: Each pivoted column as (E, M): C_c = E_c + M_c . C_inactive, E in `intermediate`.
        // Every column ends up pivoted or inactive, and each is written before it is read, so `intermediate`
        // needs no clearing: a pivoted column's E is its row's symbol plus the E of the row's other pivoted
        // columns (all pivoted earlier), and an inactive column gets its solution from the dense system.
        // Each E is added to the values of the dense rows that hold its column right after it is made, while
        // it is still in the cache (those rows' values, a few hundred symbols, stay there too), instead of
        // being read back from all over the L symbols later.
        let words = max((inactiveCount + 63) / 64, 1)
        let dependency = UnsafeMutablePointer<UInt64>.allocate(capacity: max(pivotRows.count, 1) * words)
        defer { unsafe dependency.deallocate() }
        unsafe dependency.update(repeating: 0, count: max(pivotRows.count, 1) * words)
        for q in 0..<pivotRows.count {
            let row = pivotRows[q]
            let column = pivotColumns[q]
            let target = unsafe intermediate + column * t
            let bits = unsafe dependency + q * words
            var first: UnsafePointer<UInt8>? = nil
            if row >= s { unsafe first = symbols[row - s] }
            // The bit vectors first, in a loop of their own: their loads (one scattered cache line per
            // column) then overlap instead of each waiting behind a whole symbol's XOR.
            for index in rowStart[row]..<rowStart[row + 1] {
                let other = columns[index]
                if other == column { continue }
                if unsafe state[other] == .inactive {
                    let bit = unsafe inactiveIndex[other]
                    unsafe bits[bit >> 6] ^= 1 << UInt64(bit & 63)
                } else {
                    let sourceBits = unsafe dependency + pivotIndex[other] * words
                    for word in 0..<words { unsafe bits[word] ^= sourceBits[word] }
                }
            }
            var count = 0
            if let symbol = unsafe first {
                unsafe operands[0] = symbol
                count = 1
            }
            for index in rowStart[row]..<rowStart[row + 1] {
                let other = columns[index]
                if unsafe other == column || state[other] == .inactive { continue }
                unsafe operands[count] = UnsafePointer(intermediate + other * t)
                count += 1
            }
            unsafe RaptorQArithmetic.xorSum(target, UnsafePointer(operands), count, count: t)
            for index in columnStart[column]..<columnStart[column + 1] {
                let position = unsafe densePosition[columnRows[index]]
                if position >= 0 { unsafe RaptorQArithmetic.add(values + position * t, target, count: t) }
            }
        }

        func addBits(_ q: Int, into row: UnsafeMutablePointer<UInt8>) {
            let source = unsafe dependency + q * words
            for word in 0..<words {
                var bits = unsafe source[word]
                while bits != 0 {
                    let bit = bits.trailingZeroBitCount
                    unsafe row[word * 64 + bit] ^= 1
                    bits &= bits - 1
                }
            }
        }

        // A remaining row's coefficients are binary: its columns' bit vectors are XORed a word at a time
        // (an LDPC row holds a hundred and more columns), then spread into bytes once.
        let rowBits = UnsafeMutablePointer<UInt64>.allocate(capacity: words)
        defer { unsafe rowBits.deallocate() }
        for (position, row) in remaining.enumerated() {
            unsafe rowBits.update(repeating: 0, count: words)
            for index in rowStart[row]..<rowStart[row + 1] {
                let column = columns[index]
                if unsafe state[column] == .inactive {
                    let bit = unsafe inactiveIndex[column]
                    unsafe rowBits[bit >> 6] ^= 1 << UInt64(bit & 63)
                } else {
                    let source = unsafe dependency + pivotIndex[column] * words
                    for word in 0..<words { unsafe rowBits[word] ^= source[word] }
                }
            }
            let coefficientRow = unsafe coefficients + position * width
            for word in 0..<words {
                var bits = unsafe rowBits[word]
                while bits != 0 {
                    unsafe coefficientRow[word * 64 + bits.trailingZeroBitCount] = 1
                    bits &= bits - 1
                }
            }
        }

        if h > 0 {
            let hdpcCoefficients = unsafe coefficients + remaining.count * width
            let hdpcValues = unsafe values + remaining.count * t
            let z = UnsafeMutablePointer<UInt8>.allocate(capacity: width)
            let y = UnsafeMutablePointer<UInt8>.allocate(capacity: t)
            defer {
                unsafe z.deallocate()
                unsafe y.deallocate()
            }
            unsafe z.update(repeating: 0, count: width)
            unsafe y.update(repeating: 0, count: t)
            let alpha: UInt8 = 2
            let last = kPrime + s - 1
            for k in 0...last {
                unsafe arithmetic.scale(z, alpha, count: width)
                unsafe arithmetic.scale(y, alpha, count: t)
                if unsafe state[k] == .inactive {
                    unsafe z[inactiveIndex[k]] ^= 1
                } else {
                    unsafe addBits(pivotIndex[k], into: z)
                    unsafe RaptorQArithmetic.add(y, intermediate + k * t, count: t)
                }
                if k < last {
                    let key = UInt32(k + 1)
                    let first = Int(RaptorQTuple.rand(key, 6, UInt32(h)))
                    let second = (first + Int(RaptorQTuple.rand(key, 7, UInt32(h - 1))) + 1) % h
                    unsafe RaptorQArithmetic.add(hdpcCoefficients + first * width, z, count: width)
                    unsafe RaptorQArithmetic.add(hdpcValues + first * t, y, count: t)
                    unsafe RaptorQArithmetic.add(hdpcCoefficients + second * width, z, count: width)
                    unsafe RaptorQArithmetic.add(hdpcValues + second * t, y, count: t)
                } else {
                    for target in 0..<h {
                        let factor = GF256.exp(target)
                        unsafe arithmetic.multiplyAdd(hdpcCoefficients + target * width, z, factor, count: width)
                        unsafe arithmetic.multiplyAdd(hdpcValues + target * t, y, factor, count: t)
                    }
                }
            }
            for target in 0..<h {
                let column = kPrime + s + target
                // Column K' + S + i lies in the PI range, so it is always inactive.
                unsafe hdpcCoefficients[target * width + inactiveIndex[column]] ^= 1
            }
        }

        // MARK: Gauss-Jordan on the coefficients; the same operations replayed on the values.
        var order = Array(0..<denseRows)
        var operations: [(target: Int, source: Int, factor: UInt8)] = []
        for k in 0..<inactiveCount {
            var found = -1
            for position in k..<denseRows where unsafe coefficients[order[position] * width + k] != 0 {
                found = position
                break
            }
            guard found >= 0 else {
                throw CodingError(.singularMatrix, "the received symbols do not determine the source block")
            }
            order.swapAt(k, found)
            let pivot = order[k]
            let pivotRow = unsafe coefficients + pivot * width
            let inverse = GF256.inverse(unsafe pivotRow[k])
            if inverse != 1 {
                unsafe arithmetic.scale(pivotRow + k, inverse, count: width - k)
                operations.append((pivot, -1, inverse))
            }
            for position in 0..<denseRows where position != k {
                let other = order[position]
                let factor = unsafe coefficients[other * width + k]
                guard factor != 0 else { continue }
                unsafe arithmetic.multiplyAdd(coefficients + other * width + k, pivotRow + k, factor, count: width - k)
                operations.append((other, pivot, factor))
            }
        }
        var isSolutionRow = [Bool](repeating: false, count: denseRows)
        for k in 0..<inactiveCount { isSolutionRow[order[k]] = true }
        for operation in operations where isSolutionRow[operation.target] {
            let target = unsafe values + operation.target * t
            if operation.source < 0 {
                unsafe arithmetic.scale(target, operation.factor, count: t)
            } else {
                unsafe arithmetic.multiplyAdd(target, values + operation.source * t, operation.factor, count: t)
            }
        }
        for k in 0..<inactiveCount {
            unsafe (intermediate + inactiveColumns[k] * t).update(from: values + order[k] * t, count: t)
        }

        // MARK: The wanted symbols straight from the affine forms, when that is cheaper than back substitution.
        if let wanted = unsafe wanted {
            // Each wanted symbol's bit vector, and the cost of reading the symbols off the forms: one
            // (cache-resident) inactive symbol per set bit against back substitution's one (scattered, once
            // the L symbols outgrow the cache) symbol per nonzero of A's sparse rows.
            let combined = UnsafeMutablePointer<UInt64>.allocate(capacity: max(unsafe wanted.count, 1) * words)
            defer { unsafe combined.deallocate() }
            unsafe combined.update(repeating: 0, count: max(unsafe wanted.count, 1) * words)
            var setBits = 0
            for position in 0..<(unsafe wanted.count) {
                let symbol = unsafe wanted[position]
                let bits = unsafe combined + position * words
                RaptorQTuple(isi: unsafe symbol.isi, parameters: parameters).forEachColumn(parameters: parameters) {
                    column in
                    if unsafe state[column] == .inactive {
                        let bit = unsafe inactiveIndex[column]
                        unsafe bits[bit >> 6] ^= 1 << UInt64(bit & 63)
                    } else {
                        let source = unsafe dependency + pivotIndex[column] * words
                        for word in 0..<words { unsafe bits[word] ^= source[word] }
                    }
                }
                for word in 0..<words { setBits += unsafe bits[word].nonzeroBitCount }
            }
            let affine =
                switch evaluation {
                case .cheaper: setBits < (l * t >= Self.cacheBytes ? Self.cacheResidentSpeedup : 1) * columns.count
                case .affineForms: true
                case .backSubstitution: false
                }
            if affine {
                // The tuple's non-inactive columns (at most 33) and the inactive symbols of the combined
                // bit vector, XORed in one pass.
                let gathered = UnsafeMutablePointer<UnsafePointer<UInt8>>.allocate(capacity: 64 + inactiveCount)
                defer { unsafe gathered.deallocate() }
                for position in 0..<(unsafe wanted.count) {
                    let symbol = unsafe wanted[position]
                    var count = 0
                    RaptorQTuple(isi: unsafe symbol.isi, parameters: parameters).forEachColumn(parameters: parameters) {
                        column in
                        if unsafe state[column] != .inactive && count < 64 {
                            unsafe gathered[count] = UnsafePointer(intermediate + column * t)
                            count += 1
                        }
                    }
                    let bits = unsafe combined + position * words
                    for word in 0..<words {
                        var remainingBits = unsafe bits[word]
                        while remainingBits != 0 {
                            let bit = word * 64 + remainingBits.trailingZeroBitCount
                            unsafe gathered[count] = UnsafePointer(intermediate + inactiveColumns[bit] * t)
                            count += 1
                            remainingBits &= remainingBits - 1
                        }
                    }
                    unsafe RaptorQArithmetic.xorSum(symbol.output, UnsafePointer(gathered), count, count: t)
                }
                return .affineForms
            }
        }

        // MARK: Back substitution in peeling order.
        for q in 0..<pivotRows.count {
            let row = pivotRows[q]
            let column = pivotColumns[q]
            let target = unsafe intermediate + column * t
            var count = 0
            if row >= s, let symbol = unsafe symbols[row - s] {
                unsafe operands[0] = symbol
                count = 1
            }
            for index in rowStart[row]..<rowStart[row + 1] {
                let other = columns[index]
                if other == column { continue }
                unsafe operands[count] = UnsafePointer(intermediate + other * t)
                count += 1
            }
            unsafe RaptorQArithmetic.xorSum(target, UnsafePointer(operands), count, count: t)
        }
        if let wanted = unsafe wanted {
            for position in 0..<(unsafe wanted.count) {
                let symbol = unsafe wanted[position]
                unsafe RaptorQBlockEncoder.encode(
                    isi: unsafe symbol.isi, parameters: parameters, intermediate: intermediate, symbolSize: t,
                    into: symbol.output)
            }
        }
        return .backSubstitution
    }

    /// How many XORs of a cache-resident inactive symbol cost about as much as one XOR of a symbol read
    /// from anywhere in an L-symbol array too large for the cache (measured with `aether-bench raptorq`).
    static let cacheResidentSpeedup = 4
    /// From this size of the L symbols on, they are taken not to fit the cache (below it every XOR costs
    /// about the same, and the counts of XORs decide).
    static let cacheBytes = 4 << 20

    /// Appends `row`'s columns in increasing order with pairs removed (over GF(2) a repeated column cancels).
    private static func appendDeduplicated(_ row: ArraySlice<Int>, to columns: inout [Int]) {
        let start = columns.count
        columns.append(contentsOf: row)
        var end = columns.count
        // Insertion sort: rows are short.
        var i = start + 1
        while i < end {
            let value = columns[i]
            var j = i - 1
            while j >= start && columns[j] > value {
                columns[j + 1] = columns[j]
                j -= 1
            }
            columns[j + 1] = value
            i += 1
        }
        var write = start
        var read = start
        while read < end {
            if read + 1 < end && columns[read] == columns[read + 1] {
                read += 2
                continue
            }
            columns[write] = columns[read]
            write += 1
            read += 1
        }
        end = write
        columns.removeLast(columns.count - end)
    }
}
