public import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// `aether ec encode --fountain` and the fountain half of `aether ec decode`: a file coded with RaptorQ
/// (RFC 6330) into one file per encoding packet plus `index.json` (see `FountainIndex`). The object is held
/// in memory while it is coded. The same safety rules as `ErasureCodedFile`: guarded regular-file inputs,
/// an output is never an input, the packet set is written beside OUTDIR and switched in whole, and a
/// rebuilt file replaces FILE only after its SHA-256 matches (new files follow the umask, existing ones
/// keep their mode).
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
        try isFountainDirectory(FilePath(directory))
    }

    /// `isFountainDirectory` for a directory given as bytes.
    public static func isFountainDirectory(_ directory: FilePath) throws(CodingError) -> Bool {
        guard
            let (bytes, _) = try readWholeFile(
                directory.appending(ShardIndex.fileName), limit: ShardIndex.maximumIndexBytes)
        else { return false }
        return FountainIndex.isFountainIndex(json: bytes)
    }

    /// Encodes `path` with RaptorQ at symbol size `symbolSize` (the OTI from RFC 6330 section 4.3) and
    /// `repairSymbolsPerBlock` repair packets a block into `directory`; the index is written last, atomically.
    @discardableResult
    public static func encode(
        file path: String, symbolSize: Int, repairSymbolsPerBlock: Int, into directory: String
    ) throws(CodingError) -> FountainIndex {
        try encode(
            file: FilePath(path), symbolSize: symbolSize, repairSymbolsPerBlock: repairSymbolsPerBlock,
            into: FilePath(directory))
    }

    /// `encode` with paths given as bytes.
    @discardableResult
    public static func encode(
        file path: FilePath, symbolSize: Int, repairSymbolsPerBlock: Int, into directory: FilePath
    ) throws(CodingError) -> FountainIndex {
        let input = try ErasureCodedFile.guarded { () throws(IOError) in try GuardedFile(path: path) }
        try ErasureCodedFile.checkEncodeTarget(directory, input: path)
        let data = try ErasureCodedFile.guarded { () throws(IOError) in try input.readAll(maximumBytes: Int.max) }
        guard !data.isEmpty else { throw CodingError(.invalidParameters, "an empty file has nothing to fountain-code") }
        let oti = try RaptorQTransmissionInformation.derived(transferLength: UInt64(data.count), symbolSize: symbolSize)
        let encoder = try RaptorQEncoder(data: data, transmissionInformation: oti)
        let staging = try ErasureCodedFile.guarded { () throws(IOError) in
            try DirectorySwap.makeStagingDirectory(besides: directory)
        }
        var committed = false
        defer { if !committed { ErasureCodedFile.removeSet(staging, totalShards: nil) } }
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
                let file = try ShardFile.create(staging.appending(name))
                try file.write(bytes)
                try file.sync()
                digests.append(SHA256.hash(bytes))
            }
        }
        let index = try FountainIndex(
            transmissionInformation: oti, repairSymbolsPerBlock: repairSymbolsPerBlock, fileDigest: SHA256.hash(data),
            packetDigests: digests)
        let indexFile = try ShardFile.create(staging.appending(ShardIndex.fileName))
        try indexFile.write(index.encoded())
        try indexFile.sync()
        try ShardFile.syncDirectory(staging)
        // The file is still the version that was coded.
        try ErasureCodedFile.guarded { () throws(IOError) in try input.verifyUnchanged() }
        let previous = try ErasureCodedFile.guarded { () throws(IOError) in
            try DirectorySwap.replace(directory, with: staging)
        }
        committed = true
        if let previous { ErasureCodedFile.removeSet(previous, totalShards: nil) }
        return index
    }

    /// Rebuilds the file `directory/index.json` describes into `output` from whatever packets are left
    /// (missing and damaged ones are losses). `output` is replaced atomically only after the rebuilt bytes
    /// match the file's SHA-256; on any error it is untouched.
    @discardableResult
    public static func decode(directory: String, to output: String) throws(CodingError) -> DecodeReport {
        try decode(directory: FilePath(directory), to: FilePath(output))
    }

    /// `decode` with paths given as bytes.
    @discardableResult
    public static func decode(directory: FilePath, to output: FilePath) throws(CodingError) -> DecodeReport {
        guard
            let (json, indexIdentity) = try readWholeFile(
                directory.appending(ShardIndex.fileName), limit: ShardIndex.maximumIndexBytes)
        else { throw CodingError(.malformedIndex, "no index at \(directory.appending(ShardIndex.fileName))") }
        var inputs = [indexIdentity]
        try checkOutput(output, inputs: inputs, directory: directory)
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
            let bytes: [UInt8]
            do {
                guard let (read, identity) = try readWholeFile(directory.appending(name), limit: packetLength) else {
                    missing += 1
                    continue
                }
                bytes = read
                inputs.append(identity)
            } catch  where error.code == .fileSystem {
                // Larger than a packet: damaged.
                damaged += 1
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
        try checkOutput(output, inputs: inputs, directory: directory)
        do {
            try AtomicFile.write(data, to: output)
        } catch {
            throw CodingError(error)
        }
        return DecodeReport(index: index, packetsUsed: used, missingPackets: missing, damagedPackets: damaged)
    }

    /// `output` is not the index, a packet, the directory or inside it, and is a regular file if it exists.
    private static func checkOutput(
        _ output: FilePath, inputs: [FileIdentity], directory: FilePath
    ) throws(CodingError) {
        try ErasureCodedFile.guarded { () throws(IOError) in
            let set = try FileIdentity.current(directory)
            try OutputGuard.check(output: output, inputs: inputs, directories: set.map { [$0] } ?? [])
        }
    }

    /// The whole file and its identity, nil when it does not exist; `.fileSystem` when it is larger than
    /// `limit`; `.notARegularFile` for a FIFO, device, socket or directory (never a hang).
    static func readWholeFile(_ path: FilePath, limit: Int) throws(CodingError) -> ([UInt8], FileIdentity)? {
        let file: GuardedFile
        do {
            file = try GuardedFile(path: path)
        } catch  where error.errno == ENOENT {
            return nil
        } catch {
            throw CodingError(error)
        }
        do {
            return (try file.readAll(maximumBytes: limit), file.identity)
        } catch  where error.code == .invalidArgument {
            throw CodingError(.fileSystem, "\(path) is larger than expected (\(file.identity.size) bytes)")
        } catch {
            throw CodingError(error)
        }
    }
}
