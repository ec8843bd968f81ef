/// RaptorQ object transmission information (RFC 6330 section 3.3): the transfer length F, symbol size T,
/// source block count Z, sub-block count N and symbol alignment Al, which sender and receiver must share.
/// Its 12-byte form is F (40 bits), a reserved zero byte, T (16 bits), Z (8 bits), N (16 bits), Al (8 bits),
/// all big-endian.
public struct RaptorQTransmissionInformation: Sendable, Hashable {
    /// The object's length in bytes (F).
    public let transferLength: UInt64
    /// Bytes per encoding symbol (T), a multiple of `alignment`.
    public let symbolSize: Int
    /// Source blocks (Z).
    public let sourceBlocks: Int
    /// Sub-blocks per source block (N).
    public let subBlocks: Int
    /// Symbol alignment (Al).
    public let alignment: Int

    /// The largest transfer length RFC 6330 allows (section 4.1: 946,270,874,880 bytes).
    public static let maximumTransferLength: UInt64 = 946_270_874_880

    /// The length of the serialized form.
    public static let serializedLength = 12

    /// Checks the values against RFC 6330 section 4.3's constraints; throws `.invalidTransmissionInformation`.
    public init(
        transferLength: UInt64, symbolSize: Int, sourceBlocks: Int, subBlocks: Int, alignment: Int
    ) throws(CodingError) {
        func fail(_ why: String) -> CodingError { CodingError(.invalidTransmissionInformation, why) }
        guard transferLength >= 1, transferLength <= Self.maximumTransferLength else {
            throw fail("transfer length \(transferLength) is outside 1...\(Self.maximumTransferLength)")
        }
        guard alignment >= 1, alignment <= 255 else { throw fail("symbol alignment \(alignment) is outside 1...255") }
        guard symbolSize >= alignment, symbolSize <= 65535, symbolSize % alignment == 0 else {
            throw fail("symbol size \(symbolSize) is not a multiple of the alignment \(alignment) in 1...65535")
        }
        guard sourceBlocks >= 1, sourceBlocks <= 255 else {
            throw fail("source block count \(sourceBlocks) is outside 1...255")
        }
        guard subBlocks >= 1, subBlocks <= symbolSize / alignment else {
            throw fail("sub-block count \(subBlocks) is outside 1...\(symbolSize / alignment)")
        }
        let symbols = (transferLength + UInt64(symbolSize) - 1) / UInt64(symbolSize)
        let perBlock = (symbols + UInt64(sourceBlocks) - 1) / UInt64(sourceBlocks)
        guard perBlock <= UInt64(RaptorQBlockParameters.maximumSourceSymbols) else {
            throw fail("\(perBlock) symbols a source block exceed RFC 6330's 56403")
        }
        guard UInt64(sourceBlocks) <= symbols else {
            throw fail("\(sourceBlocks) source blocks for \(symbols) symbols leaves a block empty")
        }
        self.transferLength = transferLength
        self.symbolSize = symbolSize
        self.sourceBlocks = sourceBlocks
        self.subBlocks = subBlocks
        self.alignment = alignment
    }

    /// Parses the 12-byte form; throws `.invalidTransmissionInformation` on a wrong length, a nonzero
    /// reserved byte or values RFC 6330 does not allow.
    public init(serialized bytes: some Collection<UInt8>) throws(CodingError) {
        let b = Array(bytes)
        guard b.count == Self.serializedLength else {
            throw CodingError(.invalidTransmissionInformation, "OTI is \(b.count) bytes, not 12")
        }
        guard b[5] == 0 else { throw CodingError(.invalidTransmissionInformation, "OTI reserved byte is not zero") }
        let f = b[0..<5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        try self.init(
            transferLength: f, symbolSize: Int(b[6]) << 8 | Int(b[7]), sourceBlocks: Int(b[8]),
            subBlocks: Int(b[9]) << 8 | Int(b[10]), alignment: Int(b[11]))
    }

    /// The 12-byte form.
    public var serialized: [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.serializedLength)
        for i in 0..<5 { out[i] = UInt8(truncatingIfNeeded: transferLength >> UInt64(8 * (4 - i))) }
        out[6] = UInt8(symbolSize >> 8)
        out[7] = UInt8(symbolSize & 0xFF)
        out[8] = UInt8(sourceBlocks)
        out[9] = UInt8(subBlocks >> 8)
        out[10] = UInt8(subBlocks & 0xFF)
        out[11] = UInt8(alignment)
        return out
    }

    /// Z and N derived as in RFC 6330 section 4.3 from F, T, the working memory WS (`maximumSubBlockSize`),
    /// Al and the smallest sub-symbol size SS. With the defaults (WS = 10 MiB, and Al = SS = 8 once T >= 64,
    /// else 1) the result is what the PyPI `raptorq` package chooses for `with_defaults(F, T)`.
    public static func derived(
        transferLength: UInt64, symbolSize: Int, maximumSubBlockSize: Int = 10 * 1024 * 1024,
        alignment: Int? = nil, minimumSubSymbolSize: Int? = nil
    ) throws(CodingError) -> RaptorQTransmissionInformation {
        let al = alignment ?? (symbolSize >= 64 ? 8 : 1)
        let ss = minimumSubSymbolSize ?? al
        guard al >= 1, ss >= 1, symbolSize >= al, symbolSize % al == 0, symbolSize <= 65535, transferLength >= 1,
            maximumSubBlockSize >= 1
        else {
            throw CodingError(
                .invalidTransmissionInformation, "symbol size \(symbolSize) does not fit alignment \(al)")
        }
        let kt = (transferLength + UInt64(symbolSize) - 1) / UInt64(symbolSize)
        let nMax = max(symbolSize / (ss * al), 1)
        func kl(_ n: Int) -> Int {
            let subSymbol = (symbolSize + al * n - 1) / (al * n)
            return RaptorQBlockParameters.largestExtendedSourceSymbols(atMost: maximumSubBlockSize / (al * subSymbol))
                ?? 0
        }
        let klMax = kl(nMax)
        guard klMax > 0 else {
            throw CodingError(.invalidTransmissionInformation, "the working memory cannot hold a source block")
        }
        let z = (kt + UInt64(klMax) - 1) / UInt64(klMax)
        guard z <= 255 else {
            throw CodingError(.invalidTransmissionInformation, "the object needs \(z) source blocks, more than 255")
        }
        let perBlock = Int((kt + z - 1) / z)
        var n = nMax
        for candidate in 1...nMax where perBlock <= kl(candidate) {
            n = candidate
            break
        }
        return try RaptorQTransmissionInformation(
            transferLength: transferLength, symbolSize: symbolSize, sourceBlocks: Int(z), subBlocks: n, alignment: al)
    }

    /// Source symbols of the whole object (Kt).
    public var totalSourceSymbols: Int { Int((transferLength + UInt64(symbolSize) - 1) / UInt64(symbolSize)) }

    /// Source symbols K of block `sourceBlockNumber` (RFC 6330 section 4.4.1.2: the first ZL blocks hold KL,
    /// the others KS).
    public func sourceSymbols(inBlock sourceBlockNumber: Int) -> Int {
        let (large, small, largeCount, _) = Self.partition(totalSourceSymbols, sourceBlocks)
        return sourceBlockNumber < largeCount ? large : small
    }

    /// The byte offset of block `sourceBlockNumber` in the zero-padded object.
    public func blockOffset(_ sourceBlockNumber: Int) -> UInt64 {
        let (large, small, largeCount, _) = Self.partition(totalSourceSymbols, sourceBlocks)
        let before =
            sourceBlockNumber <= largeCount
            ? sourceBlockNumber * large : largeCount * large + (sourceBlockNumber - largeCount) * small
        return UInt64(before) * UInt64(symbolSize)
    }

    /// The sub-symbol size in bytes of each of the N sub-blocks (section 4.4.1.2: TL * Al for the first NL,
    /// TS * Al for the rest).
    var subSymbolSizes: [Int] {
        let (large, small, largeCount, _) = Self.partition(symbolSize / alignment, subBlocks)
        return (0..<subBlocks).map { ($0 < largeCount ? large : small) * alignment }
    }

    /// Partition[I, J] of RFC 6330 section 4.4.1.2: (IL, IS, JL, JS).
    static func partition(_ i: Int, _ j: Int) -> (Int, Int, Int, Int) {
        let large = (i + j - 1) / j
        let small = i / j
        let largeCount = i - small * j
        return (large, small, largeCount, j - largeCount)
    }
}
