/// The derived constants of one source block (RFC 6330 section 5.3.3.3 and 5.6): K' is the smallest
/// entry of Table 2 that holds K source symbols, and the rest follow from it.
public struct RaptorQBlockParameters: Sendable, Hashable {
    /// Source symbols in the block (K).
    public let sourceSymbols: Int
    /// Extended source symbols (K'), K padded up to a Table 2 entry.
    public let extendedSourceSymbols: Int
    /// The systematic index J(K').
    let systematicIndex: UInt32
    /// LDPC symbols (S).
    let ldpcSymbols: Int
    /// HDPC symbols (H).
    let hdpcSymbols: Int
    /// LT symbols (W).
    let ltSymbols: Int

    /// The largest K' (and so the largest K) of a source block.
    public static let maximumSourceSymbols = 56403

    /// Intermediate symbols (L = K' + S + H).
    var intermediateSymbols: Int { extendedSourceSymbols + ldpcSymbols + hdpcSymbols }
    /// Permanently inactivated symbols (P = L - W).
    var permanentlyInactive: Int { intermediateSymbols - ltSymbols }
    /// The smallest prime at least P (P1).
    let permanentlyInactivePrime: Int

    /// The parameters for a block of `sourceSymbols` symbols (1 ... 56403).
    public init(sourceSymbols: Int) throws(CodingError) {
        guard sourceSymbols >= 1, sourceSymbols <= Self.maximumSourceSymbols else {
            throw CodingError(
                .invalidParameters, "a RaptorQ source block holds 1...\(Self.maximumSourceSymbols) symbols")
        }
        let table = RaptorQTables.systematicIndices
        // Binary search for the first K' >= K.
        var low = 0
        var high = table.count / 5 - 1
        while low < high {
            let middle = (low + high) / 2
            if Int(table[middle * 5]) >= sourceSymbols { high = middle } else { low = middle + 1 }
        }
        let row = low * 5
        self.sourceSymbols = sourceSymbols
        extendedSourceSymbols = Int(table[row])
        systematicIndex = table[row + 1]
        ldpcSymbols = Int(table[row + 2])
        hdpcSymbols = Int(table[row + 3])
        ltSymbols = Int(table[row + 4])
        let p = extendedSourceSymbols + ldpcSymbols + hdpcSymbols - ltSymbols
        var candidate = max(p, 2)
        while !Self.isPrime(candidate) { candidate += 1 }
        permanentlyInactivePrime = candidate
    }

    /// The largest K' of Table 2 that is at most `limit`, or nil when `limit` < 10.
    static func largestExtendedSourceSymbols(atMost limit: Int) -> Int? {
        let table = RaptorQTables.systematicIndices
        var best: Int?
        var index = 0
        while index < table.count {
            let value = Int(table[index])
            if value > limit { break }
            best = value
            index += 5
        }
        return best
    }

    private static func isPrime(_ n: Int) -> Bool {
        if n < 2 { return false }
        var divisor = 2
        while divisor * divisor <= n {
            if n % divisor == 0 { return false }
            divisor += 1
        }
        return true
    }
}
