/// The byte layout of sub-blocks (RFC 6330 section 4.4.1.2): a source block of K symbols is cut into N
/// sub-blocks of K sub-symbols each, and encoding symbol i is sub-symbol i of every sub-block in turn.
/// Every symbol operation is bytewise, so coding the interleaved symbols codes every sub-block at once.
enum RaptorQSubBlocks {
    /// The K symbols (K * T bytes) of a block laid out as the N sub-blocks one after another.
    static func interleave(_ block: [UInt8], sourceSymbols k: Int, subSymbolSizes: [Int]) -> [UInt8] {
        if subSymbolSizes.count == 1 { return block }
        let t = subSymbolSizes.reduce(0, +)
        var out = [UInt8](repeating: 0, count: block.count)
        var blockOffset = 0
        var symbolOffset = 0
        for size in subSymbolSizes {
            for i in 0..<k {
                let from = blockOffset + i * size
                out.replaceSubrange(i * t + symbolOffset..<i * t + symbolOffset + size, with: block[from..<from + size])
            }
            blockOffset += k * size
            symbolOffset += size
        }
        return out
    }

    /// The inverse of `interleave`.
    static func deinterleave(_ symbols: [UInt8], sourceSymbols k: Int, subSymbolSizes: [Int]) -> [UInt8] {
        if subSymbolSizes.count == 1 { return symbols }
        let t = subSymbolSizes.reduce(0, +)
        var out = [UInt8](repeating: 0, count: symbols.count)
        var blockOffset = 0
        var symbolOffset = 0
        for size in subSymbolSizes {
            for i in 0..<k {
                let from = i * t + symbolOffset
                out.replaceSubrange(
                    blockOffset + i * size..<blockOffset + (i + 1) * size, with: symbols[from..<from + size])
            }
            blockOffset += k * size
            symbolOffset += size
        }
        return out
    }
}
