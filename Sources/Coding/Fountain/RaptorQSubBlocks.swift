/// The byte layout of sub-blocks (RFC 6330 section 4.4.1.2): a source block of K symbols is cut into N
/// sub-blocks of K sub-symbols each, and encoding symbol i is sub-symbol i of every sub-block in turn.
/// Every symbol operation is bytewise, so coding the interleaved symbols codes every sub-block at once.
enum RaptorQSubBlocks {
    /// The K symbols (K * T bytes) of a block laid out as the N sub-blocks one after another.
    static func interleave(_ block: [UInt8], sourceSymbols k: Int, subSymbolSizes: [Int]) -> [UInt8] {
        if subSymbolSizes.count == 1 { return block }
        return transposed(block, sourceSymbols: k, subSymbolSizes: subSymbolSizes, interleaving: true)
    }

    /// The inverse of `interleave`.
    static func deinterleave(_ symbols: [UInt8], sourceSymbols k: Int, subSymbolSizes: [Int]) -> [UInt8] {
        if subSymbolSizes.count == 1 { return symbols }
        return transposed(symbols, sourceSymbols: k, subSymbolSizes: subSymbolSizes, interleaving: false)
    }

    /// Sub-symbol i of sub-block j moves between offset (sub-block j's start + i * its size) of the block
    /// layout and (i * T + the sizes of sub-blocks before j) of the symbol layout; one copy each.
    private static func transposed(
        _ input: [UInt8], sourceSymbols k: Int, subSymbolSizes: [Int], interleaving: Bool
    ) -> [UInt8] {
        let t = subSymbolSizes.reduce(0, +)
        let count = input.count
        return unsafe [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            unsafe input.withUnsafeBufferPointer { source in
                guard let from = source.baseAddress, let to = out.baseAddress, count == k * t else {
                    // Not K * T bytes: nothing to move (callers always pass K * T).
                    if let to = out.baseAddress { unsafe to.update(repeating: 0, count: count) }
                    initialized = count
                    return
                }
                var blockOffset = 0
                var symbolOffset = 0
                for size in subSymbolSizes {
                    for i in 0..<k {
                        let blockPosition = blockOffset + i * size
                        let symbolPosition = i * t + symbolOffset
                        if interleaving {
                            unsafe (to + symbolPosition).update(from: from + blockPosition, count: size)
                        } else {
                            unsafe (to + blockPosition).update(from: from + symbolPosition, count: size)
                        }
                    }
                    blockOffset += k * size
                    symbolOffset += size
                }
                initialized = count
            }
        }
    }
}
