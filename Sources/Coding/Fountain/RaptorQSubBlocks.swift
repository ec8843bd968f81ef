/// The byte layout of sub-blocks (RFC 6330 section 4.4.1.2): a source block of K symbols is cut into N
/// sub-blocks of K sub-symbols each, and encoding symbol i is sub-symbol i of every sub-block in turn.
/// Every symbol operation is bytewise, so coding the interleaved symbols codes every sub-block at once.
enum RaptorQSubBlocks {
    /// The K symbols (as sent) of a block whose first `bytes.count` (at most K * T) bytes are `bytes` and
    /// the rest zero padding: one pass, with no padded copy of the block first.
    static func interleave(_ bytes: UnsafeBufferPointer<UInt8>, sourceSymbols k: Int, subSymbolSizes: [Int]) -> [UInt8]
    {
        let t = subSymbolSizes.reduce(0, +)
        let count = k * t
        return unsafe [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            guard let to = out.baseAddress else {
                initialized = 0
                return
            }
            unsafe HugePages.advise(to, count: count)
            let available = min(bytes.count, count)
            // Copies `size` bytes from `position` of the padded block, zeros where the block has ended.
            func copy(_ position: Int, _ size: Int, to target: UnsafeMutablePointer<UInt8>) {
                let present = max(min(size, available - position), 0)
                if present > 0, let from = bytes.baseAddress {
                    unsafe target.update(from: from + position, count: present)
                }
                if present < size { unsafe (target + present).update(repeating: 0, count: size - present) }
            }
            if subSymbolSizes.count == 1 {
                unsafe copy(0, count, to: to)
            } else {
                var blockOffset = 0
                var symbolOffset = 0
                for size in subSymbolSizes {
                    for i in 0..<k { unsafe copy(blockOffset + i * size, size, to: to + i * t + symbolOffset) }
                    blockOffset += k * size
                    symbolOffset += size
                }
            }
            initialized = count
        }
    }

    /// The block layout (K * T bytes) of `symbols`, the inverse of `interleave`.
    static func deinterleave(_ symbols: [UInt8], sourceSymbols k: Int, subSymbolSizes: [Int]) -> [UInt8] {
        if subSymbolSizes.count == 1 { return symbols }
        let count = symbols.count
        return unsafe [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            initialized = 0
            guard let to = out.baseAddress else { return }
            unsafe symbols.withUnsafeBufferPointer { buffer in
                unsafe deinterleave(buffer, sourceSymbols: k, subSymbolSizes: subSymbolSizes, into: to, limit: count)
            }
            // Callers pass K * T bytes; anything past K * T (never written above) is zeroed, not left undefined.
            let written = min(count, k * subSymbolSizes.reduce(0, +))
            if written < count { unsafe (to + written).update(repeating: 0, count: count - written) }
            initialized = count
        }
    }

    /// Writes the first `limit` bytes (at most K * T) of the block layout of `symbols` (the K symbols of a block)
    /// to `out`: the object's bytes go straight to their place, with no whole block in between.
    static func deinterleave(
        _ symbols: UnsafeBufferPointer<UInt8>, sourceSymbols k: Int, subSymbolSizes: [Int],
        into out: UnsafeMutablePointer<UInt8>, limit: Int
    ) {
        guard let from = symbols.baseAddress else { return }
        let t = subSymbolSizes.reduce(0, +)
        let limit = min(limit, k * t, symbols.count)
        if subSymbolSizes.count == 1 {
            unsafe out.update(from: from, count: limit)
            return
        }
        var blockOffset = 0
        var symbolOffset = 0
        for size in subSymbolSizes {
            for i in 0..<k {
                let position = blockOffset + i * size
                let present = min(size, limit - position)
                if present <= 0 { return }
                unsafe (out + position).update(from: from + i * t + symbolOffset, count: present)
            }
            blockOffset += k * size
            symbolOffset += size
        }
    }
}
