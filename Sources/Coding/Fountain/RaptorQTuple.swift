/// The encoding tuple (d, a, b, d1, a1, b1) of one internal symbol id (RFC 6330 section 5.3.5.4), and the
/// intermediate-symbol columns it selects (section 5.3.5.3, Enc[]).
struct RaptorQTuple: Sendable, Hashable {
    /// LT degree.
    let d: UInt32
    /// LT step.
    let a: UInt32
    /// LT start.
    let b: UInt32
    /// PI degree.
    let d1: UInt32
    /// PI step.
    let a1: UInt32
    /// PI start.
    let b1: UInt32

    /// Rand[y, i, m] of RFC 6330 section 5.3.5.1.
    static func rand(_ y: UInt32, _ i: UInt32, _ m: UInt32) -> UInt32 {
        let v0 = RaptorQTables.v0[Int((y &+ i) & 0xFF)]
        let v1 = RaptorQTables.v1[Int(((y >> 8) &+ i) & 0xFF)]
        let v2 = RaptorQTables.v2[Int(((y >> 16) &+ i) & 0xFF)]
        let v3 = RaptorQTables.v3[Int(((y >> 24) &+ i) & 0xFF)]
        return (v0 ^ v1 ^ v2 ^ v3) % m
    }

    /// Deg[v] of RFC 6330 section 5.3.5.2 for W = `ltSymbols`.
    static func degree(_ v: UInt32, ltSymbols: Int) -> UInt32 {
        let thresholds = RaptorQTables.degreeThresholds
        var d = 1
        while d < thresholds.count - 1, v >= thresholds[d] { d += 1 }
        return UInt32(min(d, ltSymbols - 2))
    }

    /// Tuple[K', X] for the internal symbol id `isi`.
    init(isi: UInt32, parameters: RaptorQBlockParameters) {
        let j = parameters.systematicIndex
        let w = UInt32(parameters.ltSymbols)
        let p1 = UInt32(parameters.permanentlyInactivePrime)
        var stepA: UInt32 = 53591 &+ j &* 997
        if stepA % 2 == 0 { stepA &+= 1 }
        let stepB: UInt32 = 10267 &* (j &+ 1)
        let y = stepB &+ isi &* stepA
        let v = Self.rand(y, 0, 1 << 20)
        d = Self.degree(v, ltSymbols: parameters.ltSymbols)
        a = 1 + Self.rand(y, 1, w - 1)
        b = Self.rand(y, 2, w)
        d1 = d < 4 ? 2 + Self.rand(isi, 3, 2) : 2
        a1 = 1 + Self.rand(isi, 4, p1 - 1)
        b1 = Self.rand(isi, 5, p1)
    }

    /// Calls `body` with each intermediate-symbol column Enc[] adds, in order (d + d1 columns; a column can
    /// repeat, which over GF(2) cancels).
    func forEachColumn(parameters: RaptorQBlockParameters, _ body: (Int) -> Void) {
        let w = UInt32(parameters.ltSymbols)
        let p = UInt32(parameters.permanentlyInactive)
        let p1 = UInt32(parameters.permanentlyInactivePrime)
        var column = b
        body(Int(column))
        var step: UInt32 = 1
        while step < d {
            column = (column + a) % w
            body(Int(column))
            step += 1
        }
        var column1 = b1
        while column1 >= p { column1 = (column1 + a1) % p1 }
        body(Int(w + column1))
        step = 1
        while step < d1 {
            column1 = (column1 + a1) % p1
            while column1 >= p { column1 = (column1 + a1) % p1 }
            body(Int(w + column1))
            step += 1
        }
    }
}
