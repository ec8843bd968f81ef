import AetherIO

/// `aether ec encode --fountain` and the fountain half of `aether ec decode`: a file coded with RaptorQ
/// (RFC 6330) into one file per encoding packet plus `index.json` (see `FountainIndex`). The object is held
/// in memory while it is coded.
public enum FountainCodedFile {
    /// What a decode used and found.
    public struct DecodeReport: Sendable, Equatable {
        /// The index that was read.
        public let index: FountainIndex
        /// Packets fed to the decoder.
        public let packetsUsed: Int
        /// Packet files that were missing.
        public let missingPackets: Int
        /// Packet files whose SHA-256 did not match the index (treated as lost).
        public let damagedPackets: Int
    }

    /// Whether `directory/index.json` is a fountain index (else another code's, or none).
    public static func isFountainDirectory(_ directory: String) throws(CodingError) -> Bool {
        guard let bytes = try readWholeFile(directory + "/" + ShardIndex.fileName, limit: ShardIndex.maximumIndexBytes)
        else { return false }
        return FountainIndex.isFountainIndex(json: bytes)
    }

    /// Encodes `path` with RaptorQ at symbol size `symbolSize` (the OTI from RFC 6330 section 4.3) and
    /// `repairSymbolsPerBlock` repair packets a block into `directory`; the index is written last, atomically.
    @discardableResult
    public static func encode(
        file path: String, symbolSize: Int, repairSymbolsPerBlock: Int, into directory: String
    ) throws(CodingError) -> FountainIndex {
        guard let data = try readWholeFile(path, limit: Int.max) else {
            throw CodingError(.fileSystem, "no such file: \(path)")
        }
        guard !data.isEmpty else { throw CodingError(.invalidParameters, "an empty file has nothing to fountain-code") }
        let oti = try RaptorQTransmissionInformation.derived(transferLength: UInt64(data.count), symbolSize: symbolSize)
        let encoder = try RaptorQEncoder(data: data, transmissionInformation: oti)
        try ShardFile.makeDirectory(directory)
        // A stale index must never describe half-written packets.
        try ShardFile.remove(directory + "/" + ShardIndex.fileName)
        var digests: [Digest32] = []
        var symbol = [UInt8](repeating: 0, count: oti.symbolSize)
        for block in encoder.blocks {
            for esi in 0..<UInt32(block.sourceSymbols + repairSymbolsPerBlock) {
                try block.writeSymbol(esi: esi, into: &symbol)
                let packet = try RaptorQPacket(
                    sourceBlockNumber: block.sourceBlockNumber, encodingSymbolID: esi, symbol: symbol)
                let bytes = packet.serialized
                let name = FountainIndex.packetFileName(
                    sourceBlockNumber: block.sourceBlockNumber, encodingSymbolID: esi)
                let file = try ShardFile.create(directory + "/" + name)
                var failure: CodingError?
                unsafe bytes.withUnsafeBytes { raw in
                    do throws(CodingError) { try unsafe file.write(at: 0, from: raw) } catch { failure = error }
                }
                if let failure { throw failure }
                try file.sync()
                digests.append(SHA256.hash(bytes))
            }
        }
        let index = try FountainIndex(
            transmissionInformation: oti, repairSymbolsPerBlock: repairSymbolsPerBlock, fileDigest: SHA256.hash(data),
            packetDigests: digests)
        try ErasureCodedFile.writeAtomically(try index.encoded(), to: directory + "/" + ShardIndex.fileName)
        return index
    }

    /// Rebuilds the file `directory/index.json` describes into `output` from whatever packets are left
    /// (missing and damaged ones are losses). `output` is replaced atomically only after the rebuilt bytes
    /// match the file's SHA-256; on any error it is untouched.
    @discardableResult
    public static func decode(directory: String, to output: String) throws(CodingError) -> DecodeReport {
        guard
            let json = try readWholeFile(
                directory + "/" + ShardIndex.fileName, limit: ShardIndex.maximumIndexBytes)
        else { throw CodingError(.malformedIndex, "no index at \(directory)/\(ShardIndex.fileName)") }
        let index = try FountainIndex(json: json)
        let oti = index.transmissionInformation
        var decoder = try RaptorQDecoder(transmissionInformation: oti)
        let packetLength = RaptorQPacket.payloadIDLength + oti.symbolSize
        var used = 0
        var missing = 0
        var damaged = 0
        for (position, id) in index.packetIDs.enumerated() {
            if case .decoded = decoder.blocks[id.sourceBlockNumber].progress { continue }
            let name = FountainIndex.packetFileName(
                sourceBlockNumber: id.sourceBlockNumber, encodingSymbolID: id.encodingSymbolID)
            guard let bytes = try readWholeFile(directory + "/" + name, limit: packetLength + 1) else {
                missing += 1
                continue
            }
            guard bytes.count == packetLength, SHA256.hash(bytes) == index.packetDigests[position] else {
                damaged += 1
                continue
            }
            let packet = try RaptorQPacket(serialized: bytes)
            guard packet.sourceBlockNumber == id.sourceBlockNumber, packet.encodingSymbolID == id.encodingSymbolID
            else {
                damaged += 1
                continue
            }
            try decoder.add(packet)
            used += 1
        }
        guard let data = decoder.decodedObject else {
            throw CodingError(
                .tooFewShards,
                "the \(used) intact packets do not rebuild the file (\(missing) missing, \(damaged) damaged)")
        }
        guard SHA256.hash(data) == index.fileDigest else {
            throw CodingError(.verificationFailed, "the rebuilt file does not match its SHA-256 in the index")
        }
        try ErasureCodedFile.writeAtomically(data, to: output)
        return DecodeReport(index: index, packetsUsed: used, missingPackets: missing, damagedPackets: damaged)
    }

    /// The whole file, nil when it does not exist; `.fileSystem` when it is larger than `limit`.
    static func readWholeFile(_ path: String, limit: Int) throws(CodingError) -> [UInt8]? {
        guard let file = try ShardFile.openForReading(path) else { return nil }
        let size = try file.size()
        guard size <= limit else { throw CodingError(.fileSystem, "\(path) is larger than expected (\(size) bytes)") }
        var bytes = [UInt8](repeating: 0, count: size)
        var got = 0
        var failure: CodingError?
        unsafe bytes.withUnsafeMutableBytes { raw in
            do throws(CodingError) { got = try unsafe file.read(at: 0, into: raw) } catch { failure = error }
        }
        if let failure { throw failure }
        guard got == size else { throw CodingError(.fileSystem, "\(path) changed while it was read") }
        return bytes
    }
}
