/// One RaptorQ encoding packet: the RFC 6330 FEC payload ID (section 3.2: SBN, 8 bits, then ESI, 24 bits,
/// big-endian) followed by one encoding symbol.
public struct RaptorQPacket: Sendable, Hashable {
    /// The source block number (SBN).
    public let sourceBlockNumber: Int
    /// The encoding symbol ID (ESI): below K a source symbol, from K on a repair symbol.
    public let encodingSymbolID: UInt32
    /// The encoding symbol (T bytes).
    public let symbol: [UInt8]

    /// The length of the FEC payload ID.
    public static let payloadIDLength = 4

    /// The largest ESI a 24-bit field carries.
    public static let maximumEncodingSymbolID: UInt32 = (1 << 24) - 1

    /// A packet; throws `.malformedPacket` when the SBN or ESI does not fit its field.
    public init(sourceBlockNumber: Int, encodingSymbolID: UInt32, symbol: [UInt8]) throws(CodingError) {
        guard (0...255).contains(sourceBlockNumber) else {
            throw CodingError(.malformedPacket, "source block number \(sourceBlockNumber) does not fit 8 bits")
        }
        guard encodingSymbolID <= Self.maximumEncodingSymbolID else {
            throw CodingError(.malformedPacket, "encoding symbol ID \(encodingSymbolID) does not fit 24 bits")
        }
        self.sourceBlockNumber = sourceBlockNumber
        self.encodingSymbolID = encodingSymbolID
        self.symbol = symbol
    }

    /// Parses payload ID + symbol; throws `.malformedPacket` when there is no payload ID or no symbol.
    public init(serialized bytes: some Collection<UInt8>) throws(CodingError) {
        // One copy of the bytes (a block copy for contiguous storage), then the payload ID is shifted out of it
        // in place, so the symbol needs no second array.
        var b = Array(bytes)
        guard b.count > Self.payloadIDLength else {
            throw CodingError(.malformedPacket, "a packet of \(b.count) bytes has no symbol after its payload ID")
        }
        let sourceBlockNumber = Int(b[0])
        let encodingSymbolID = UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
        b.removeFirst(Self.payloadIDLength)
        try self.init(sourceBlockNumber: sourceBlockNumber, encodingSymbolID: encodingSymbolID, symbol: b)
    }

    /// Payload ID followed by the symbol.
    public var serialized: [UInt8] {
        // One allocation of the final size (a 4-byte literal grown by the symbol took two and a copy).
        var out: [UInt8] = []
        out.reserveCapacity(Self.payloadIDLength + symbol.count)
        out.append(UInt8(sourceBlockNumber))
        out.append(UInt8(encodingSymbolID >> 16 & 0xFF))
        out.append(UInt8(encodingSymbolID >> 8 & 0xFF))
        out.append(UInt8(encodingSymbolID & 0xFF))
        out.append(contentsOf: symbol)
        return out
    }
}
