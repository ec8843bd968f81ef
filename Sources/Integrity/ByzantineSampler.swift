import AetherIO

/// Chooses which acknowledged chunks the client challenges: an unbiased random subset.
///
/// Sample size `max(ceil(log2 n), ceil(sqrt(n / 10)))` (capped at `n`): logarithmic for small
/// uploads, growing with √n for large ones so a server that dropped a fixed fraction of chunks is
/// caught with rising probability. Selection is a partial Fisher-Yates shuffle (BUG-15: never a
/// prefix, never modulo-biased) over a `RandomNumberGenerator`; production uses `SecureRandom`, a
/// CSPRNG, so the server cannot predict the sample. Memory is O(sample), not O(n).
public enum ByzantineSampler {
    /// `max(ceil(log2 n), ceil(sqrt(n / 10)))`, at most `n`; 0 for no chunks.
    public static func sampleCount(chunkCount n: Int) -> Int {
        guard n > 0 else { return 0 }
        let log2Ceiling = n <= 1 ? 0 : Int.bitWidth - (n - 1).leadingZeroBitCount
        // ceil(sqrt(n/10)) exactly: the smallest k with 10 k^2 >= n.
        var root = Int((Double(n) / 10).squareRoot())
        while 10 * root * root < n { root += 1 }
        while root > 0 && 10 * (root - 1) * (root - 1) >= n { root -= 1 }
        return min(n, max(log2Ceiling, root))
    }

    /// `count` distinct indices from `0..<population`, each subset equally likely, in draw order.
    public static func sample(
        _ count: Int, from population: Int, using generator: inout some RandomNumberGenerator
    ) -> [Int] {
        let k = max(0, min(count, population))
        // The first k steps of a Fisher-Yates shuffle; swapped slots live in a dictionary so a
        // million chunks cost O(k) memory.
        var displaced: [Int: Int] = [:]
        var result: [Int] = []
        result.reserveCapacity(k)
        for i in 0..<k {
            let j = Int.random(in: i..<population, using: &generator)
            let atJ = displaced[j] ?? j
            let atI = displaced[i] ?? i
            result.append(atJ)
            displaced[j] = atI
        }
        return result
    }

    /// The production sample for an upload of `chunkCount` chunks, drawn from the system CSPRNG.
    public static func sample(chunkCount: Int) -> [Int] {
        var generator = SecureRandom()
        return sample(sampleCount(chunkCount: chunkCount), from: chunkCount, using: &generator)
    }
}
