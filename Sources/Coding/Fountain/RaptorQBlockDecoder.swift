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
    /// The source symbols received so far, each at ESI * T of K * T bytes (allocated at the first one); once
    /// decoded, the missing ones are written into their places and this becomes `decodedSymbols`.
    private var source: [UInt8] = []
    /// Which source symbols `source` holds.
    private var present: [Bool] = []
    private var sourceReceived = 0
    /// The repair symbols received so far, back to back, and their ESIs.
    private var repair: [UInt8] = []
    private var repairESIs: [UInt32] = []
    private var repairSeen: Set<UInt32> = []
    /// The decoded block's K symbols as sent (sub-blocks interleaved); the block layout is made on request.
    private var decodedSymbols: [UInt8]?
    /// How the solver computes the missing source symbols (tests force each way).
    var evaluation: RaptorQSolver.Evaluation = .cheaper
    /// The way the solver took in the decode that succeeded.
    private(set) var evaluationTaken: RaptorQSolver.Evaluation?

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
    public var received: Int { sourceReceived + repairESIs.count }

    /// The current progress.
    public var progress: Progress {
        decodedSymbols == nil ? .needsMore(received: received, sourceSymbols: sourceSymbols) : .decoded
    }

    /// The rebuilt block (K * T bytes, padding included) once decoded.
    public var decodedBlock: [UInt8]? {
        decodedSymbols.map {
            RaptorQSubBlocks.deinterleave($0, sourceSymbols: sourceSymbols, subSymbolSizes: subSymbolSizes)
        }
    }

    /// Writes the first `count` bytes of the decoded block to `out`; false (nothing written) before decoding.
    func writeDecodedBlock(prefix count: Int, into out: UnsafeMutablePointer<UInt8>) -> Bool {
        guard let symbols = decodedSymbols else { return false }
        unsafe symbols.withUnsafeBufferPointer { buffer in
            unsafe RaptorQSubBlocks.deinterleave(
                buffer, sourceSymbols: sourceSymbols, subSymbolSizes: subSymbolSizes, into: out, limit: count)
        }
        return true
    }

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
        if decodedSymbols != nil { return progress }
        let t = symbolSize
        if Int(esi) < sourceSymbols {
            if source.isEmpty {
                source = Self.zeroedSymbols(sourceSymbols * t)
                present = [Bool](repeating: false, count: sourceSymbols)
            }
            if present[Int(esi)] { return progress }
            present[Int(esi)] = true
            sourceReceived += 1
            let start = Int(esi) * t
            let copied: Void? = unsafe source.withUnsafeMutableBufferPointer { target in
                symbol.withContiguousStorageIfAvailable { bytes in
                    guard let from = bytes.baseAddress, let to = target.baseAddress else { return }
                    unsafe (to + start).update(from: from, count: t)
                }
            }
            if copied == nil { source.replaceSubrange(start..<start + t, with: symbol) }
        } else {
            if repairSeen.contains(esi) { return progress }
            repairSeen.insert(esi)
            repairESIs.append(esi)
            repair.append(contentsOf: symbol)
        }
        if sourceReceived == sourceSymbols {
            finish()
        } else if received >= sourceSymbols {
            tryDecode()
        }
        return progress
    }

    /// `count` zero bytes, on huge pages when that many bytes span some (see `HugePages`).
    private static func zeroedSymbols(_ count: Int) -> [UInt8] {
        unsafe [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if let base = buffer.baseAddress {
                unsafe HugePages.advise(base, count: count)
                unsafe base.update(repeating: 0, count: count)
            }
            initialized = count
        }
    }

    /// `source` holds every source symbol: it is the block.
    private mutating func finish() {
        decodedSymbols = source
        source = []
        present = []
        repair = []
        repairESIs = []
        repairSeen = []
    }

    /// Solves for the missing source symbols and writes them into their places in `source`; leaves
    /// everything as it was (but for those places) when the symbols so far do not determine the block.
    private mutating func tryDecode() {
        let t = symbolSize
        let k = sourceSymbols
        let kPrime = parameters.extendedSourceSymbols
        let padding = UInt32(kPrime - k)
        let parameters = self.parameters
        let present = self.present
        let repairESIs = self.repairESIs
        let evaluation = self.evaluation
        var taken: RaptorQSolver.Evaluation?
        // Moved out so that the buffer is uniquely referenced while the solver writes into it.
        var buffer = source
        source = []
        if buffer.isEmpty { buffer = Self.zeroedSymbols(k * t) }
        let solved: Bool = unsafe buffer.withUnsafeMutableBufferPointer { sourceBuffer in
            unsafe repair.withUnsafeBufferPointer { repairBuffer in
                guard let sourceBase = sourceBuffer.baseAddress else { return false }
                var isis: [UInt32] = []
                var pointers: [UnsafePointer<UInt8>?] = unsafe []
                var wanted: [RaptorQSolver.Wanted] = unsafe []
                isis.reserveCapacity(received + kPrime - k)
                unsafe pointers.reserveCapacity(received + kPrime - k)
                for i in 0..<k {
                    if present.isEmpty || !present[i] {
                        unsafe wanted.append(RaptorQSolver.Wanted(isi: UInt32(i), output: sourceBase + i * t))
                    } else {
                        isis.append(UInt32(i))
                        unsafe pointers.append(UnsafePointer(sourceBase + i * t))
                    }
                }
                if let repairBase = repairBuffer.baseAddress {
                    for (r, esi) in repairESIs.enumerated() {
                        isis.append(esi + padding)
                        unsafe pointers.append(repairBase + r * t)
                    }
                }
                for i in k..<kPrime {
                    isis.append(UInt32(i))
                    unsafe pointers.append(nil)
                }
                let intermediate = UnsafeMutablePointer<UInt8>.allocate(capacity: parameters.intermediateSymbols * t)
                unsafe HugePages.advise(intermediate, count: parameters.intermediateSymbols * t)
                defer { unsafe intermediate.deallocate() }
                do {
                    taken = try unsafe RaptorQSolver.solve(
                        parameters: parameters, isis: isis, symbols: pointers, symbolSize: t,
                        intermediate: intermediate, wanted: wanted, evaluation: evaluation)
                } catch {
                    return false
                }
                return true
            }
        }
        source = buffer
        if solved {
            evaluationTaken = taken
            finish()
        }
    }
}
