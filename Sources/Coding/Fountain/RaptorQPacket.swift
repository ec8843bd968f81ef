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
        guard bytes.count > Self.payloadIDLength else {
            throw CodingError(.malformedPacket, "a packet of \(bytes.count) bytes has no symbol after its payload ID")
        }
        // The symbol is copied once, straight from `bytes`.
        var id: UInt32 = 0
        for byte in bytes.prefix(Self.payloadIDLength) { id = id << 8 | UInt32(byte) }
        try self.init(
            sourceBlockNumber: Int(id >> 24), encodingSymbolID: id & Self.maximumEncodingSymbolID,
            symbol: Array(bytes.dropFirst(Self.payloadIDLength)))
    }

    /// Payload ID followed by the symbol.
    public var serialized: [UInt8] {
        var out: [UInt8] = [
            UInt8(sourceBlockNumber), UInt8(encodingSymbolID >> 16 & 0xFF), UInt8(encodingSymbolID >> 8 & 0xFF),
            UInt8(encodingSymbolID & 0xFF),
        ]
        out.append(contentsOf: symbol)
        return out
    }
}
