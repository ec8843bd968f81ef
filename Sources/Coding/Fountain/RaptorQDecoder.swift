/// The RaptorQ decoder of a whole object: packets of any block in any order; it reports "needs more" until
/// every source block is rebuilt.
public struct RaptorQDecoder: Sendable {
    /// Where decoding of the object stands.
    public enum Progress: Sendable, Hashable {
        /// `blocksLeft` source blocks still need symbols.
        case needsMore(blocksLeft: Int)
        /// Every block is rebuilt; `decodedObject` holds the object.
        case decoded
    }

    /// The OTI of the object.
    public let transmissionInformation: RaptorQTransmissionInformation
    /// One decoder per source block, in SBN order.
    public private(set) var blocks: [RaptorQBlockDecoder]
    private var blocksLeft: Int

    /// A decoder for the object `transmissionInformation` describes.
    public init(transmissionInformation oti: RaptorQTransmissionInformation) throws(CodingError) {
        transmissionInformation = oti
        var blocks: [RaptorQBlockDecoder] = []
        for sbn in 0..<oti.sourceBlocks {
            blocks.append(try RaptorQBlockDecoder(transmissionInformation: oti, sourceBlockNumber: sbn))
        }
        self.blocks = blocks
        blocksLeft = blocks.count
    }

    /// The current progress.
    public var progress: Progress { blocksLeft == 0 ? .decoded : .needsMore(blocksLeft: blocksLeft) }

    /// Adds one packet. Throws `.malformedPacket` when its SBN is outside the object or its symbol is not T bytes.
    @discardableResult
    public mutating func add(_ packet: RaptorQPacket) throws(CodingError) -> Progress {
        guard packet.sourceBlockNumber < blocks.count else {
            throw CodingError(
                .malformedPacket, "source block number \(packet.sourceBlockNumber) is outside 0..<\(blocks.count)")
        }
        let before = blocks[packet.sourceBlockNumber].progress
        let after = try blocks[packet.sourceBlockNumber].add(esi: packet.encodingSymbolID, symbol: packet.symbol)
        if before != .decoded && after == .decoded { blocksLeft -= 1 }
        return progress
    }

    /// Parses and adds one serialized packet (payload ID + symbol).
    @discardableResult
    public mutating func add(serialized bytes: some Collection<UInt8>) throws(CodingError) -> Progress {
        try add(RaptorQPacket(serialized: bytes))
    }

    /// The object (exactly F bytes) once every block is decoded, else nil.
    public var decodedObject: [UInt8]? {
        guard blocksLeft == 0 else { return nil }
        let total = Int(transmissionInformation.transferLength)
        let oti = transmissionInformation
        let blocks = self.blocks
        var complete = true
        // Each block is laid out straight into the object (one copy, no block-sized array in between).
        let out = unsafe [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            initialized = 0
            guard let base = buffer.baseAddress else { return }
            unsafe HugePages.advise(base, count: total)
            for block in blocks {
                let offset = min(Int(oti.blockOffset(block.sourceBlockNumber)), total)
                let count = min(block.sourceSymbols * block.symbolSize, total - offset)
                guard unsafe block.writeDecodedBlock(prefix: count, into: base + offset) else {
                    complete = false
                    return
                }
            }
            initialized = total
        }
        return complete ? out : nil
    }
}
