public import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// `aether ec encode --fountain` and the fountain half of `aether ec decode`: a file coded with RaptorQ
/// (RFC 6330) into one file per encoding packet plus `index.json` (see `FountainIndex`). Both directions
/// work one source block at a time, so memory is bounded by a block and its packets, never by the file.
/// The same safety rules as `ErasureCodedFile`: guarded regular-file inputs, an output is never an input,
/// the packet set is written beside OUTDIR and switched in whole, and a rebuilt file replaces FILE only
/// after its SHA-256 matches (new files follow the umask, existing ones keep their mode).
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
        try encode(
            file: path, symbolSize: symbolSize, repairSymbolsPerBlock: repairSymbolsPerBlock, into: directory,
            maximumSubBlockSize: defaultMaximumSubBlockSize, minimumSubSymbolSize: nil)
    }

    /// `encode` with source blocks of at most `maximumBlockSize` bytes: the OTI is derived with one sub-block
    /// (N = 1) and WS = `maximumBlockSize`, so each block holds at most `maximumBlockSize / symbolSize`
    /// symbols and the run's memory is about one such block and its packets. Too small a bound for ten
    /// symbols, or one that needs more than 255 blocks, is `.invalidTransmissionInformation`.
    @discardableResult
    public static func encode(
        file path: FilePath, symbolSize: Int, repairSymbolsPerBlock: Int, maximumBlockSize: Int,
        into directory: FilePath
    ) throws(CodingError) -> FountainIndex {
        let alignment = symbolSize >= 64 ? 8 : 1
        guard symbolSize >= alignment, symbolSize % alignment == 0 else {
            throw CodingError(
                .invalidTransmissionInformation, "symbol size \(symbolSize) does not fit alignment \(alignment)")
        }
        guard maximumBlockSize <= Self.maximumBlockSize else {
            throw CodingError(
                .invalidParameters,
                "a source block of up to \(maximumBlockSize) bytes exceeds the bound of \(Self.maximumBlockSize)")
        }
        guard maximumBlockSize >= 10 * symbolSize else {
            throw CodingError(
                .invalidParameters,
                "a source block of at most \(maximumBlockSize) bytes cannot hold the 10 symbols of "
                    + "\(symbolSize) bytes RaptorQ needs")
        }
        return try encode(
            file: path, symbolSize: symbolSize, repairSymbolsPerBlock: repairSymbolsPerBlock, into: directory,
            maximumSubBlockSize: maximumBlockSize, minimumSubSymbolSize: symbolSize / alignment)
    }

    /// RFC 6330's WS, the working memory the OTI is derived for.
    static let defaultMaximumSubBlockSize = 10 * 1024 * 1024

    /// The largest source block (K * T bytes) a fountain file is coded or decoded in, 128 MiB: a run holds
    /// about one block and its packets, a few times this at most. RFC 6330's derivation for WS = 10 MiB
    /// alone allows 56,403 * T bytes (3.7 GB at T = 65,528): where it gives more than this, `encode` takes
    /// the `maximumBlockSize` derivation with this bound instead, and `decode` refuses an index whose OTI
    /// has a larger block (`.invalidTransmissionInformation`) before it allocates anything for it.
    public static let maximumBlockSize = 128 << 20

    /// `encode` with the OTI derived for the working memory `maximumSubBlockSize` and smallest sub-symbol
    /// `minimumSubSymbolSize` (tests use both to cut small files into many source blocks). One source block
    /// at a time is read from the guarded input, encoded, written out and dropped; `memory` sees every
    /// buffer of file bytes held.
    static func encode(
        file path: FilePath, symbolSize: Int, repairSymbolsPerBlock: Int, into directory: FilePath,
        maximumSubBlockSize: Int, minimumSubSymbolSize: Int?, memory: MemoryProbe? = nil,
        blockBound: Int = maximumBlockSize
    ) throws(CodingError) -> FountainIndex {
        guard repairSymbolsPerBlock >= 0 else {
            throw CodingError(.invalidParameters, "repair symbol count cannot be negative")
        }
        let input = try ErasureCodedFile.guarded { () throws(IOError) in try GuardedFile(path: path) }
        try ErasureCodedFile.checkEncodeTarget(directory, input: path)
        let fileSize = input.identity.size
        guard fileSize > 0 else { throw CodingError(.invalidParameters, "an empty file has nothing to fountain-code") }
        var oti = try RaptorQTransmissionInformation.derived(
            transferLength: UInt64(fileSize), symbolSize: symbolSize, maximumSubBlockSize: maximumSubBlockSize,
            minimumSubSymbolSize: minimumSubSymbolSize)
        if largestBlockBytes(oti) > blockBound {
            // N = 1 and WS = the bound: no block exceeds it (too small a bound is `.invalidTransmissionInformation`).
            oti = try RaptorQTransmissionInformation.derived(
                transferLength: UInt64(fileSize), symbolSize: symbolSize, maximumSubBlockSize: blockBound,
                minimumSubSymbolSize: symbolSize / (symbolSize >= 64 ? 8 : 1))
        }
        let staging = try ErasureCodedFile.guarded { () throws(IOError) in
            try DirectorySwap.makeStagingDirectory(besides: directory)
        }
        var committed = false
        defer { if !committed { ErasureCodedFile.removeSet(staging, totalShards: nil) } }
        var digests: [Digest32] = []
        var fileHasher = SHA256()
        var symbol = [UInt8](repeating: 0, count: oti.symbolSize)
        for sbn in 0..<oti.sourceBlocks {
            let data = try readBlock(sbn, of: input, transmissionInformation: oti)
            memory?.hold(data.count)
            fileHasher.update(data)
            let block = try RaptorQBlockEncoder(block: data, sourceBlockNumber: sbn, transmissionInformation: oti)
            for esi in 0..<UInt32(block.sourceSymbols + repairSymbolsPerBlock) {
                try block.writeSymbol(esi: esi, into: &symbol)
                let packet = try RaptorQPacket(sourceBlockNumber: sbn, encodingSymbolID: esi, symbol: symbol)
                let bytes = packet.serialized
                let name = FountainIndex.packetFileName(sourceBlockNumber: sbn, encodingSymbolID: esi)
                let file = try ShardFile.create(staging.appending(name))
                try file.write(bytes)
                try file.sync()
                digests.append(SHA256.hash(bytes))
            }
            memory?.release(data.count)
        }
        let index = try FountainIndex(
            transmissionInformation: oti, repairSymbolsPerBlock: repairSymbolsPerBlock,
            fileDigest: fileHasher.finalize(), packetDigests: digests)
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

    /// The bytes of source block `sbn` (up to K * T, fewer for the last block), read from the guarded input
    /// and checked unchanged.
    private static func readBlock(
        _ sbn: Int, of input: GuardedFile, transmissionInformation oti: RaptorQTransmissionInformation
    ) throws(CodingError) -> [UInt8] {
        let (start, length) = blockExtent(sbn, oti)
        var data = [UInt8](repeating: 0, count: length)
        var outcome: Result<Int, IOError> = .success(0)
        unsafe data.withUnsafeMutableBytes { raw in
            outcome = Result { () throws(IOError) -> Int in try unsafe input.read(at: Int64(start), into: raw) }
        }
        let got = try ErasureCodedFile.guarded { () throws(IOError) in try outcome.get() }
        try ErasureCodedFile.guarded { () throws(IOError) in try input.verifyUnchanged() }
        guard got == length else {
            throw CodingError(.fileChanged, "\(input.path) shrank while it was encoded")
        }
        return data
    }

    /// Where source block `sbn` lies in the file: its offset and its length without the zero padding.
    private static func blockExtent(_ sbn: Int, _ oti: RaptorQTransmissionInformation) -> (Int, Int) {
        let size = Int(oti.transferLength)
        let start = min(Int(oti.blockOffset(sbn)), size)
        let end = min(start + oti.sourceSymbols(inBlock: sbn) * oti.symbolSize, size)
        return (start, end - start)
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
        try decode(directory: directory, to: output, memory: nil)
    }

    /// `decode`, one source block at a time: the block's packets are gathered and decoded, the block is
    /// written at its offset into a staged output and dropped; the staged file's SHA-256 is checked before
    /// it replaces `output`. `memory` sees every buffer of rebuilt file bytes held.
    static func decode(
        directory: FilePath, to output: FilePath, memory: MemoryProbe?, blockBound: Int = maximumBlockSize
    ) throws(CodingError) -> DecodeReport {
        guard
            let (json, indexIdentity) = try readWholeFile(
                directory.appending(ShardIndex.fileName), limit: ShardIndex.maximumIndexBytes)
        else { throw CodingError(.malformedIndex, "no index at \(directory.appending(ShardIndex.fileName))") }
        var inputs = [indexIdentity]
        try checkOutput(output, inputs: inputs, directory: directory)
        let index = try FountainIndex(json: json)
        let oti = index.transmissionInformation
        guard largestBlockBytes(oti) <= blockBound else {
            throw CodingError(
                .invalidTransmissionInformation,
                "the index's source blocks of \(largestBlockBytes(oti)) bytes exceed the bound of \(blockBound)")
        }
        let packetLength = RaptorQPacket.payloadIDLength + oti.symbolSize
        // AetherIO's one atomic writer, streaming: nothing reaches `output` before the commit, and whatever
        // is not committed (any error below) is removed.
        let staged = try ErasureCodedFile.guarded { () throws(IOError) in try AtomicFile.Staged(replacing: output) }
        defer { staged.discard() }
        var used = 0
        var missing = 0
        var damaged = 0
        var position = 0
        for sbn in 0..<oti.sourceBlocks {
            var decoder = try RaptorQBlockDecoder(transmissionInformation: oti, sourceBlockNumber: sbn)
            let count = decoder.sourceSymbols + index.repairSymbolsPerBlock
            let first = position
            position += count
            for esi in 0..<UInt32(count) {
                if case .decoded = decoder.progress { break }
                let name = FountainIndex.packetFileName(sourceBlockNumber: sbn, encodingSymbolID: esi)
                let bytes: [UInt8]
                do {
                    guard let (read, identity) = try readWholeFile(directory.appending(name), limit: packetLength)
                    else {
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
                guard bytes.count == packetLength, SHA256.hash(bytes) == index.packetDigests[first + Int(esi)] else {
                    damaged += 1
                    continue
                }
                let packet = try RaptorQPacket(serialized: bytes)
                guard packet.sourceBlockNumber == sbn, packet.encodingSymbolID == esi else {
                    damaged += 1
                    continue
                }
                try decoder.add(esi: esi, symbol: packet.symbol)
                used += 1
            }
            guard let block = decoder.decodedBlock else {
                throw CodingError(
                    .tooFewShards,
                    "the intact packets of source block \(sbn) do not rebuild it (\(used) used so far, "
                        + "\(missing) missing, \(damaged) damaged)")
            }
            let (start, length) = blockExtent(sbn, oti)
            memory?.hold(block.count)
            try ErasureCodedFile.guarded { () throws(IOError) in
                try staged.write(block[0..<length], at: Int64(start))
            }
            memory?.release(block.count)
        }
        guard try ErasureCodedFile.sha256(of: staged, size: index.fileSize) == index.fileDigest else {
            throw CodingError(.verificationFailed, "the rebuilt file does not match its SHA-256 in the index")
        }
        try checkOutput(output, inputs: inputs, directory: directory)
        try ErasureCodedFile.guarded { () throws(IOError) in try staged.commit() }
        return DecodeReport(index: index, packetsUsed: used, missingPackets: missing, damagedPackets: damaged)
    }

    /// K * T of the OTI's largest source block (the first: blocks of KL symbols come before those of KS).
    static func largestBlockBytes(_ oti: RaptorQTransmissionInformation) -> Int {
        oti.sourceSymbols(inBlock: 0) * oti.symbolSize
    }

    /// Counts the bytes of file data a coding run holds at once, for tests of its memory bound.
    final class MemoryProbe: @unchecked Sendable {
        // @unchecked: used from the one thread that runs the coding call.
        private(set) var held = 0
        private(set) var peak = 0
        private(set) var buffers = 0

        func hold(_ bytes: Int) {
            held += bytes
            buffers += 1
            peak = max(peak, held)
        }

        func release(_ bytes: Int) { held -= bytes }
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
