/// The RaptorQ encoder of a whole object (RFC 6330): the object is cut into Z source blocks as the OTI says,
/// and each block has its own `RaptorQBlockEncoder`.
public struct RaptorQEncoder: Sendable {
    /// The object transmission information the receiver needs.
    public let transmissionInformation: RaptorQTransmissionInformation
    /// One encoder per source block, in SBN order.
    public let blocks: [RaptorQBlockEncoder]

    /// Encodes `data` with the given OTI (its transfer length must equal `data.count`).
    public init(data: [UInt8], transmissionInformation oti: RaptorQTransmissionInformation) throws(CodingError) {
        guard UInt64(data.count) == oti.transferLength else {
            throw CodingError(
                .invalidParameters, "the OTI's transfer length \(oti.transferLength) is not \(data.count)")
        }
        transmissionInformation = oti
        var blocks: [RaptorQBlockEncoder] = []
        for sbn in 0..<oti.sourceBlocks {
            let start = min(Int(oti.blockOffset(sbn)), data.count)
            let end = min(start + oti.sourceSymbols(inBlock: sbn) * oti.symbolSize, data.count)
            blocks.append(
                try RaptorQBlockEncoder(block: data[start..<end], sourceBlockNumber: sbn, transmissionInformation: oti))
        }
        self.blocks = blocks
    }

    /// Encodes `data` with symbol size `symbolSize` and the OTI `RaptorQTransmissionInformation.derived` gives.
    public init(data: [UInt8], symbolSize: Int) throws(CodingError) {
        try self.init(
            data: data,
            transmissionInformation: RaptorQTransmissionInformation.derived(
                transferLength: UInt64(data.count), symbolSize: symbolSize))
    }

    /// Every source packet of every block followed by `repairSymbolsPerBlock` repair packets (ESI K, K + 1, ...).
    public func packets(repairSymbolsPerBlock: Int) throws(CodingError) -> [RaptorQPacket] {
        guard repairSymbolsPerBlock >= 0 else {
            throw CodingError(.invalidParameters, "repair symbol count cannot be negative")
        }
        var out: [RaptorQPacket] = []
        out.reserveCapacity(blocks.reduce(0) { $0 + $1.sourceSymbols + repairSymbolsPerBlock })
        for block in blocks {
            for esi in 0..<(block.sourceSymbols + repairSymbolsPerBlock) {
                out.append(try block.packet(esi: UInt32(esi)))
            }
        }
        return out
    }
}
