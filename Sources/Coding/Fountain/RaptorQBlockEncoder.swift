/// The encoder of one RaptorQ source block: it solves for the L intermediate symbols once, then makes the
/// encoding symbol of any ESI (RFC 6330 section 5.3): ESIs below K are the source symbols themselves,
/// later ones repair symbols, as many as wanted (rateless).
public struct RaptorQBlockEncoder: Sendable {
    /// The source block number (SBN).
    public let sourceBlockNumber: Int
    /// Source symbols K.
    public let sourceSymbols: Int
    /// Bytes per symbol T.
    public let symbolSize: Int
    let parameters: RaptorQBlockParameters
    /// The K source symbols as sent (sub-blocks interleaved), K * T bytes.
    private let source: [UInt8]
    /// The L intermediate symbols, L * T bytes.
    private let intermediate: [UInt8]

    /// Encodes block `sourceBlockNumber` of an object; `block` is that block's bytes (at most K * T; the
    /// rest is zero padding).
    public init(
        block: some Collection<UInt8>, sourceBlockNumber: Int,
        transmissionInformation oti: RaptorQTransmissionInformation
    ) throws(CodingError) {
        guard sourceBlockNumber >= 0, sourceBlockNumber < oti.sourceBlocks else {
            throw CodingError(.invalidParameters, "source block \(sourceBlockNumber) is outside the object")
        }
        let k = oti.sourceSymbols(inBlock: sourceBlockNumber)
        let t = oti.symbolSize
        guard block.count <= k * t else {
            throw CodingError(.invalidParameters, "a block of \(block.count) bytes exceeds K * T = \(k * t)")
        }
        self.sourceBlockNumber = sourceBlockNumber
        sourceSymbols = k
        symbolSize = t
        parameters = try RaptorQBlockParameters(sourceSymbols: k)
        let subSymbolSizes = oti.subSymbolSizes
        let interleaved: [UInt8]
        if let contiguous = block.withContiguousStorageIfAvailable({ bytes in
            unsafe RaptorQSubBlocks.interleave(bytes, sourceSymbols: k, subSymbolSizes: subSymbolSizes)
        }) {
            interleaved = contiguous
        } else {
            interleaved = unsafe Array(block).withUnsafeBufferPointer { bytes in
                unsafe RaptorQSubBlocks.interleave(bytes, sourceSymbols: k, subSymbolSizes: subSymbolSizes)
            }
        }
        source = interleaved
        let l = parameters.intermediateSymbols
        var isis = [UInt32](repeating: 0, count: parameters.extendedSourceSymbols)
        for i in 0..<isis.count { isis[i] = UInt32(i) }
        let parameters = self.parameters
        var failure: CodingError?
        // The solver writes every one of the L symbols, so the buffer starts uninitialized.
        let symbolsOut = unsafe [UInt8](unsafeUninitializedCapacity: l * t) { out, initialized in
            initialized = 0
            unsafe interleaved.withUnsafeBufferPointer { sourceBuffer in
                guard let base = sourceBuffer.baseAddress, let outBase = out.baseAddress else {
                    failure = CodingError(.invalidParameters, "empty")
                    return
                }
                unsafe HugePages.advise(outBase, count: l * t)
                var pointers = unsafe [UnsafePointer<UInt8>?](repeating: nil, count: isis.count)
                for i in 0..<k { unsafe pointers[i] = base + i * t }
                do throws(CodingError) {
                    try unsafe RaptorQSolver.solve(
                        parameters: parameters, isis: isis, symbols: pointers, symbolSize: t, intermediate: outBase)
                    initialized = l * t
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
        intermediate = symbolsOut
    }

    /// The encoding symbol with ID `esi` (below 2^24).
    public func symbol(esi: UInt32) throws(CodingError) -> [UInt8] {
        guard esi <= RaptorQPacket.maximumEncodingSymbolID else {
            throw CodingError(.invalidParameters, "encoding symbol ID \(esi) does not fit 24 bits")
        }
        let t = symbolSize
        if Int(esi) < sourceSymbols { return Array(source[Int(esi) * t..<Int(esi) * t + t]) }
        let isi = esi + UInt32(parameters.extendedSourceSymbols - sourceSymbols)
        // `encode` writes all T bytes, so the array starts uninitialized.
        return unsafe [UInt8](unsafeUninitializedCapacity: t) { out, initialized in
            unsafe intermediate.withUnsafeBufferPointer { symbols in
                guard let targetBase = out.baseAddress, let base = symbols.baseAddress else { return }
                unsafe RaptorQBlockEncoder.encode(
                    isi: isi, parameters: parameters, intermediate: base, symbolSize: t, into: targetBase)
                initialized = t
            }
        }
    }

    /// Writes the encoding symbol with ID `esi` into `out` (T bytes), allocating nothing.
    public func writeSymbol(esi: UInt32, into out: inout [UInt8]) throws(CodingError) {
        guard esi <= RaptorQPacket.maximumEncodingSymbolID else {
            throw CodingError(.invalidParameters, "encoding symbol ID \(esi) does not fit 24 bits")
        }
        guard out.count == symbolSize else {
            throw CodingError(.invalidParameters, "the output holds \(out.count) bytes, not T = \(symbolSize)")
        }
        let t = symbolSize
        if Int(esi) < sourceSymbols {
            let start = Int(esi) * t
            out.replaceSubrange(0..<t, with: source[start..<start + t])
            return
        }
        let isi = esi + UInt32(parameters.extendedSourceSymbols - sourceSymbols)
        unsafe out.withUnsafeMutableBufferPointer { target in
            unsafe intermediate.withUnsafeBufferPointer { symbols in
                guard let targetBase = target.baseAddress, let base = symbols.baseAddress else { return }
                unsafe RaptorQBlockEncoder.encode(
                    isi: isi, parameters: parameters, intermediate: base, symbolSize: t, into: targetBase)
            }
        }
    }

    /// The packet (payload ID + symbol) for `esi`.
    public func packet(esi: UInt32) throws(CodingError) -> RaptorQPacket {
        try RaptorQPacket(sourceBlockNumber: sourceBlockNumber, encodingSymbolID: esi, symbol: symbol(esi: esi))
    }

    /// Enc[] of RFC 6330 section 5.3.5.3: the XOR of the intermediate symbols the tuple of `isi` selects.
    static func encode(
        isi: UInt32, parameters: RaptorQBlockParameters, intermediate: UnsafePointer<UInt8>, symbolSize t: Int,
        into out: UnsafeMutablePointer<UInt8>
    ) {
        // One pass over the T bytes reads every column (a repeated column cancels, as it should). The tuple
        // selects d <= 30 LT columns and d1 <= 3 PI columns, so the pointers fit a small stack buffer.
        unsafe withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>.self, capacity: 64) { operands in
            guard let base = operands.baseAddress else { return }
            var count = 0
            RaptorQTuple(isi: isi, parameters: parameters).forEachColumn(parameters: parameters) { column in
                guard count < 64 else { return }
                unsafe base[count] = intermediate + column * t
                count += 1
            }
            unsafe RaptorQArithmetic.xorSum(out, UnsafePointer(base), count, count: t)
        }
    }
}
