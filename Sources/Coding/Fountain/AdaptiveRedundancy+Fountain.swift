/// What the policy's `.fountain` decision leads to: RaptorQ coding of the group, with a first batch of
/// repair symbols sized to the loss rate and more sent on demand (rateless) until the receiver's
/// `RaptorQDecoder` stops saying `.needsMore`.
extension AdaptiveRedundancy {
    /// The RaptorQ encoder for a group the policy handed to the fountain fallback (OTI per RFC 6330
    /// section 4.3 for symbol size `symbolSize`).
    public static func fountainEncoder(group: [UInt8], symbolSize: Int = 1280) throws(CodingError) -> RaptorQEncoder {
        guard !group.isEmpty else { throw CodingError(.invalidParameters, "an empty group has nothing to encode") }
        return try RaptorQEncoder(data: group, symbolSize: symbolSize)
    }

    /// Repair symbols to send with the K source symbols of a block so that K + 2 symbols are expected to
    /// arrive at `lossRate` (then RFC 6330's failure probability is about 1e-6); later losses are covered
    /// by sending further repair symbols (ESI K + this count, and up) while the receiver needs more.
    public static func initialRepairSymbols(sourceSymbols: Int, lossRate: Double) throws(CodingError) -> Int {
        guard sourceSymbols >= 1, sourceSymbols <= RaptorQBlockParameters.maximumSourceSymbols else {
            throw CodingError(.invalidParameters, "source symbol count \(sourceSymbols) is outside 1...56403")
        }
        guard lossRate.isFinite, lossRate >= 0, lossRate < 1 else {
            throw CodingError(.invalidParameters, "loss rate must be in [0, 1), got \(lossRate)")
        }
        let needed = Double(sourceSymbols + 2) / (1 - lossRate)
        return Int(needed.rounded(.up)) - sourceSymbols
    }
}
