import AetherIO

/// Splits a file into k data shards plus m Reed-Solomon parity shards in a directory (with a
/// `ShardIndex`), and rebuilds the file from any k good shards. Both directions stream the file in
/// stripes, so memory stays bounded (about 64 MiB of stripe) whatever the file size.
public enum ErasureCodedFile {
    /// The stripe memory budget: each stripe holds k + m blocks of `blockSize` bytes.
    static let stripeBudget = 64 << 20

    /// Bytes of each shard processed per stripe.
    static func blockSize(shardSize: Int, code: ReedSolomonCode, maximum: Int) -> Int {
        let perShard = max(64, min(maximum, max(4096, stripeBudget / code.totalShards))) & ~63
        return max(code.field.symbolSize, min(shardSize, perShard))
    }

    /// Encodes `file` into `directory` (created if needed): shard files `shard-NNNNN.bin` and, last,
    /// `index.json` written atomically. Returns the index.
    @discardableResult
    public static func encode(
        file path: String, dataShards: Int, parityShards: Int, into directory: String,
        kernel: ReedSolomonKernel = .automatic
    ) throws(CodingError) -> ShardIndex {
        try encode(
            file: path, dataShards: dataShards, parityShards: parityShards, into: directory, kernel: kernel,
            maximumBlockSize: 1 << 20)
    }

    /// `encode` with the per-shard block of each stripe capped at `maximumBlockSize` (tests use small
    /// blocks to cross many stripe boundaries with small files).
    static func encode(
        file path: String, dataShards: Int, parityShards: Int, into directory: String,
        kernel: ReedSolomonKernel, maximumBlockSize: Int
    ) throws(CodingError) -> ShardIndex {
        let code = try ReedSolomonCode(dataShards: dataShards, parityShards: parityShards)
        guard let input = try ShardFile.openForReading(path) else {
            throw CodingError(.fileSystem, "no such file: \(path)")
        }
        let fileSize = try input.size()
        let shardSize = ShardIndex.shardSize(fileSize: fileSize, code: code)
        try ShardFile.makeDirectory(directory)
        // A stale index must never describe half-written shards.
        try ShardFile.remove(directory + "/" + ShardIndex.fileName)
        var outputs: [ShardFile] = []
        for index in 0..<code.totalShards {
            outputs.append(try ShardFile.create(directory + "/" + ShardIndex.shardFileName(index)))
        }
        var hashers = [SHA256](repeating: SHA256(), count: code.totalShards)
        let block = blockSize(shardSize: shardSize, code: code, maximum: maximumBlockSize)
        let stripe = try ShardStripe(code: code, shardCapacity: block)
        let encoder = ReedSolomonEncoder(code: code, kernel: kernel)
        var offset = 0
        while offset < shardSize {
            let length = min(block, shardSize - offset)
            for shard in 0..<code.dataShards {
                let start = shard * shardSize + offset
                let available = max(0, min(length, fileSize - start))
                try unsafe stripe.withUnsafeMutableBytes(ofShard: shard) { (raw) throws(CodingError) in
                    let got = try unsafe input.read(
                        at: start, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<available]))
                    guard got == available else {
                        throw CodingError(.fileSystem, "\(path) shrank while it was encoded")
                    }
                    unsafe UnsafeMutableRawBufferPointer(rebasing: raw[available..<length]).initializeMemory(
                        as: UInt8.self, repeating: 0)
                }
            }
            try encoder.encode(stripe, shardLength: length)
            for shard in 0..<code.totalShards {
                try unsafe stripe.withUnsafeBytes(ofShard: shard) { (raw) throws(CodingError) in
                    let bytes = unsafe UnsafeRawBufferPointer(rebasing: raw[0..<length])
                    unsafe hashers[shard].update(bytes)
                    try unsafe outputs[shard].write(at: offset, from: bytes)
                }
            }
            offset += length
        }
        guard try input.size() == fileSize else {
            throw CodingError(.fileSystem, "\(path) changed while it was encoded")
        }
        for output in outputs { try output.sync() }
        let index = try ShardIndex(code: code, fileSize: fileSize, shardDigests: hashers.map { $0.finalize() })
        try writeAtomically(try index.encoded(), to: directory + "/" + ShardIndex.fileName)
        return index
    }

    /// Reads and validates `directory/index.json`.
    public static func readIndex(directory: String) throws(CodingError) -> ShardIndex {
        let path = directory + "/" + ShardIndex.fileName
        guard let file = try ShardFile.openForReading(path) else {
            throw CodingError(.malformedIndex, "no index at \(path)")
        }
        let size = try file.size()
        guard size <= ShardIndex.maximumIndexBytes else {
            throw CodingError(.malformedIndex, "index \(path) is \(size) bytes, more than an index can be")
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var got = 0
        var failure: CodingError?
        unsafe bytes.withUnsafeMutableBytes { raw in
            do throws(CodingError) { got = try unsafe file.read(at: 0, into: raw) } catch { failure = error }
        }
        if let failure { throw failure }
        return try ShardIndex(json: Array(bytes.prefix(got)))
    }

    /// Rebuilds the file described by `directory/index.json` into `output` from any k shards that have
    /// the right size and digest (missing, wrong-size and damaged shards are erasures). The result is
    /// written to a temporary file beside `output`, checked against every data shard digest, synced and
    /// only then renamed over `output`; on any error `output` is untouched.
    @discardableResult
    public static func decode(
        directory: String, to output: String, kernel: ReedSolomonKernel = .automatic
    ) throws(CodingError) -> ShardFileDecodeReport {
        try decode(directory: directory, to: output, kernel: kernel, maximumBlockSize: 1 << 20)
    }

    /// `decode` with the per-shard block of each stripe capped at `maximumBlockSize`.
    static func decode(
        directory: String, to output: String, kernel: ReedSolomonKernel, maximumBlockSize: Int
    ) throws(CodingError) -> ShardFileDecodeReport {
        let index = try readIndex(directory: directory)
        let code = index.code
        var files: [ShardFile?] = []
        var missing: [Int] = []
        var wrongSize: [Int] = []
        for shard in 0..<code.totalShards {
            let path = directory + "/" + ShardIndex.shardFileName(shard)
            guard let file = try ShardFile.openForReading(path) else {
                missing.append(shard)
                files.append(nil)
                continue
            }
            let size: Int
            do { size = try file.size() } catch { size = -1 }
            if size == index.shardSize {
                files.append(file)
            } else {
                wrongSize.append(shard)
                files.append(nil)
            }
        }
        let temporary = try ShardFile.createTemporary(besides: output)
        var committed = false
        defer {
            // Cleanup on failure; the original error is what the caller needs.
            if !committed { try? ShardFile.remove(temporary.path) }
        }
        var corrupt: [Int] = []
        while true {
            let usable = (0..<code.totalShards).filter { files[$0] != nil && !corrupt.contains($0) }
            guard usable.count >= code.dataShards else {
                let sizeIsTheCause = usable.count + wrongSize.count >= code.dataShards
                throw CodingError(
                    sizeIsTheCause ? .shardSizeMismatch : .tooFewShards,
                    "\(usable.count) usable shards, \(code) needs \(code.dataShards) (missing \(missing), "
                        + "wrong size \(wrongSize), digest mismatch \(corrupt.sorted()))")
            }
            let chosen = Set(usable.prefix(code.dataShards))
            let decoder = try ReedSolomonDecoder(
                code: code, present: (0..<code.totalShards).map { chosen.contains($0) }, kernel: kernel)
            let bad = try rebuild(
                index: index, decoder: decoder, files: files, into: temporary, maximumBlockSize: maximumBlockSize)
            if !bad.isEmpty {
                corrupt += bad
                continue
            }
            try temporary.sync()
            try ShardFile.rename(temporary.path, to: output)
            committed = true
            try ShardFile.syncDirectory(ShardFile.directory(of: output))
            return ShardFileDecodeReport(
                index: index, inputShards: decoder.inputShards, rebuiltDataShards: decoder.missingDataShards,
                missingShards: missing, wrongSizeShards: wrongSize, corruptShards: corrupt.sorted())
        }
    }

    /// One decoding pass into `output`; returns the input shards whose digest did not match (empty on
    /// success). Rebuilt shards that do not match while every input does is `.verificationFailed`.
    private static func rebuild(
        index: ShardIndex, decoder: ReedSolomonDecoder, files: [ShardFile?], into output: ShardFile,
        maximumBlockSize: Int
    ) throws(CodingError) -> [Int] {
        let code = index.code
        let shardSize = index.shardSize
        let fileSize = index.fileSize
        try output.truncate(to: 0)
        try output.truncate(to: fileSize)
        var inputHashers = [SHA256](repeating: SHA256(), count: decoder.inputShards.count)
        var rebuiltHashers = [SHA256](repeating: SHA256(), count: decoder.missingDataShards.count)
        var shortInputs: Set<Int> = []
        let block = blockSize(shardSize: shardSize, code: code, maximum: maximumBlockSize)
        let stripe = try ShardStripe(code: code, shardCapacity: block)
        var offset = 0
        while offset < shardSize {
            let length = min(block, shardSize - offset)
            for (slot, shard) in decoder.inputShards.enumerated() {
                guard let file = files[shard] else { continue }
                try unsafe stripe.withUnsafeMutableBytes(ofShard: shard) { (raw) throws(CodingError) in
                    let got = try unsafe file.read(
                        at: offset, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<length]))
                    if got != length { shortInputs.insert(shard) }
                    unsafe inputHashers[slot].update(UnsafeRawBufferPointer(rebasing: raw[0..<got]))
                }
            }
            try decoder.reconstruct(stripe, shardLength: length)
            for (slot, shard) in decoder.missingDataShards.enumerated() {
                unsafe stripe.withUnsafeBytes(ofShard: shard) { raw in
                    unsafe rebuiltHashers[slot].update(UnsafeRawBufferPointer(rebasing: raw[0..<length]))
                }
            }
            for shard in 0..<code.dataShards {
                let start = shard * shardSize + offset
                let count = max(0, min(length, fileSize - start))
                guard count > 0 else { continue }
                try unsafe stripe.withUnsafeBytes(ofShard: shard) { (raw) throws(CodingError) in
                    try unsafe output.write(at: start, from: UnsafeRawBufferPointer(rebasing: raw[0..<count]))
                }
            }
            offset += length
        }
        var bad: [Int] = []
        for (slot, shard) in decoder.inputShards.enumerated()
        where shortInputs.contains(shard) || inputHashers[slot].finalize() != index.shardDigests[shard] {
            bad.append(shard)
        }
        guard bad.isEmpty else { return bad }
        for (slot, shard) in decoder.missingDataShards.enumerated()
        where rebuiltHashers[slot].finalize() != index.shardDigests[shard] {
            throw CodingError(
                .verificationFailed, "rebuilt data shard \(shard) does not match its digest in the index")
        }
        return []
    }

    /// Writes `bytes` to `path` atomically (AetherIO's temporary file, fsync, rename, directory fsync).
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws(CodingError) {
        do {
            try AtomicFile.write(bytes, to: path)
        } catch {
            throw CodingError(.fileSystem, "cannot write \(path): \(error.message)")
        }
    }
}
