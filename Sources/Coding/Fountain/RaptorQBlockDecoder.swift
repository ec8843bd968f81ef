/// The decoder of one RaptorQ source block. Feed it encoding symbols in any order; each `add` says whether
/// the block is rebuilt or more symbols are needed, so a sender can keep sending repair symbols until then.
public struct RaptorQBlockDecoder: Sendable {
    /// Where decoding of a block stands.
    public enum Progress: Sendable, Hashable {
        /// Not yet decodable: `received` distinct symbols of the `sourceSymbols` (K) at least needed.
        case needsMore(received: Int, sourceSymbols: Int)
        /// The block is rebuilt.
        case decoded
    }

    /// The source block number (SBN).
    public let sourceBlockNumber: Int
    /// Source symbols K.
    public let sourceSymbols: Int
    /// Bytes per symbol T.
    public let symbolSize: Int
    let parameters: RaptorQBlockParameters
    private let subSymbolSizes: [Int]
    private var symbols: [UInt8] = []
    private var esis: [UInt32] = []
    private var seen: Set<UInt32> = []
    private var sourceReceived = 0
    private var block: [UInt8]?

    /// A decoder for block `sourceBlockNumber` of the object `transmissionInformation` describes.
    public init(transmissionInformation oti: RaptorQTransmissionInformation, sourceBlockNumber: Int) throws(CodingError)
    {
        guard sourceBlockNumber >= 0, sourceBlockNumber < oti.sourceBlocks else {
            throw CodingError(
                .malformedPacket, "source block number \(sourceBlockNumber) is outside 0..<\(oti.sourceBlocks)")
        }
        self.sourceBlockNumber = sourceBlockNumber
        sourceSymbols = oti.sourceSymbols(inBlock: sourceBlockNumber)
        symbolSize = oti.symbolSize
        parameters = try RaptorQBlockParameters(sourceSymbols: sourceSymbols)
        subSymbolSizes = oti.subSymbolSizes
    }

    /// Distinct symbols received so far.
    public var received: Int { esis.count }

    /// The current progress.
    public var progress: Progress {
        block == nil ? .needsMore(received: received, sourceSymbols: sourceSymbols) : .decoded
    }

    /// The rebuilt block (K * T bytes, padding included) once decoded.
    public var decodedBlock: [UInt8]? { block }

    /// Adds the encoding symbol `esi`; a repeated ESI or a symbol after decoding is ignored. Throws
    /// `.malformedPacket` when the symbol is not T bytes or the ESI does not fit 24 bits.
    @discardableResult
    public mutating func add(esi: UInt32, symbol: some Collection<UInt8>) throws(CodingError) -> Progress {
        guard symbol.count == symbolSize else {
            throw CodingError(.malformedPacket, "a symbol of \(symbol.count) bytes where T = \(symbolSize)")
        }
        guard esi <= RaptorQPacket.maximumEncodingSymbolID else {
            throw CodingError(.malformedPacket, "encoding symbol ID \(esi) does not fit 24 bits")
        }
        if block != nil || seen.contains(esi) { return progress }
        seen.insert(esi)
        esis.append(esi)
        symbols.append(contentsOf: symbol)
        if Int(esi) < sourceSymbols { sourceReceived += 1 }
        if sourceReceived == sourceSymbols {
            assembleFromSource()
        } else if esis.count >= sourceSymbols {
            tryDecode()
        }
        return progress
    }

    private mutating func assembleFromSource() {
        let t = symbolSize
        var out = [UInt8](repeating: 0, count: sourceSymbols * t)
        for (index, esi) in esis.enumerated() where Int(esi) < sourceSymbols {
            out.replaceSubrange(Int(esi) * t..<Int(esi) * t + t, with: symbols[index * t..<index * t + t])
        }
        block = RaptorQSubBlocks.deinterleave(out, sourceSymbols: sourceSymbols, subSymbolSizes: subSymbolSizes)
        symbols = []
    }

    private mutating func tryDecode() {
        let t = symbolSize
        let k = sourceSymbols
        let kPrime = parameters.extendedSourceSymbols
        let padding = UInt32(kPrime - k)
        var isis: [UInt32] = esis.map { Int($0) < k ? $0 : $0 + padding }
        for i in k..<kPrime { isis.append(UInt32(i)) }
        let parameters = self.parameters
        let esis = self.esis
        var out = [UInt8](repeating: 0, count: k * t)
        let solved: Bool = unsafe symbols.withUnsafeBufferPointer { received in
            guard let base = received.baseAddress else { return false }
            var pointers = unsafe [UnsafePointer<UInt8>?](repeating: nil, count: isis.count)
            for r in 0..<esis.count { unsafe pointers[r] = base + r * t }
            var intermediate = [UInt8](repeating: 0, count: parameters.intermediateSymbols * t)
            return unsafe intermediate.withUnsafeMutableBufferPointer { c in
                guard let cBase = c.baseAddress else { return false }
                do {
                    try unsafe RaptorQSolver.solve(
                        parameters: parameters, isis: isis, symbols: pointers, symbolSize: t, intermediate: cBase)
                } catch {
                    return false
                }
                unsafe out.withUnsafeMutableBufferPointer { target in
                    guard let targetBase = target.baseAddress else { return }
                    var present = [Bool](repeating: false, count: k)
                    for (r, esi) in esis.enumerated() where Int(esi) < k {
                        present[Int(esi)] = true
                        unsafe (targetBase + Int(esi) * t).update(from: base + r * t, count: t)
                    }
                    for i in 0..<k where !present[i] {
                        unsafe RaptorQBlockEncoder.encode(
                            isi: UInt32(i), parameters: parameters, intermediate: cBase, symbolSize: t,
                            into: targetBase + i * t)
                    }
                }
                return true
            }
        }
        if solved {
            block = RaptorQSubBlocks.deinterleave(out, sourceSymbols: k, subSymbolSizes: subSymbolSizes)
            symbols = []
        }
    }
}
