public import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// Splits a file into k data shards plus m Reed-Solomon parity shards in a directory (with a
/// `ShardIndex`), and rebuilds the file from any k good shards. Both directions stream the file in
/// stripes, so memory stays bounded (about 64 MiB of stripe) whatever the file size.
///
/// Safety rules (docs/ERASURE-CODING.md):
/// - Inputs (the file, the index, every shard) are opened with AetherIO's `GuardedFile`: regular files
///   only (a FIFO, device, socket or directory is `.notARegularFile`, never a hang), and the file being
///   encoded is checked unchanged after every stripe (`.fileChanged`).
/// - An output is never an input (`.outputIsInput`): the file is not inside the directory it is encoded
///   into, and a rebuilt file is not the index, a shard, or anything inside the shard directory.
/// - Encode writes the new set into a sibling directory and switches it in with one exchange
///   (`DirectorySwap`); a failure at any point leaves the earlier set whole.
/// - Decode checks the rebuilt file's SHA-256 against the index (or the caller's expected digest)
///   before it replaces anything.
public enum ErasureCodedFile {
    /// The stripe memory budget: each stripe holds k + m blocks of `blockSize` bytes.
    static let stripeBudget = 64 << 20

    /// Bytes of each shard processed per stripe.
    static func blockSize(shardSize: Int, code: ReedSolomonCode, maximum: Int) -> Int {
        let perShard = max(64, min(maximum, max(4096, stripeBudget / code.totalShards))) & ~63
        return max(code.field.symbolSize, min(shardSize, perShard))
    }

    /// Encodes `file` into `directory`: shard files `shard-NNNNN.bin` and `index.json`. The set is
    /// written beside `directory` and switched in whole, replacing an earlier set there. `directory`
    /// must be missing, empty, or hold only a shard set. Returns the index.
    @discardableResult
    public static func encode(
        file path: FilePath, dataShards: Int, parityShards: Int, into directory: FilePath,
        kernel: ReedSolomonKernel = .automatic
    ) throws(CodingError) -> ShardIndex {
        try encode(
            file: path, dataShards: dataShards, parityShards: parityShards, into: directory, kernel: kernel,
            maximumBlockSize: 1 << 20)
    }

    /// `encode` with paths given as text.
    @discardableResult
    public static func encode(
        file path: String, dataShards: Int, parityShards: Int, into directory: String,
        kernel: ReedSolomonKernel = .automatic
    ) throws(CodingError) -> ShardIndex {
        try encode(
            file: FilePath(path), dataShards: dataShards, parityShards: parityShards, into: FilePath(directory),
            kernel: kernel)
    }

    /// `encode` with the per-shard block of each stripe capped at `maximumBlockSize` (tests use small
    /// blocks to cross many stripe boundaries with small files); `afterStripe` is a test hook called
    /// after each stripe is read (tests change the file there, or fail the run).
    static func encode(
        file path: FilePath, dataShards: Int, parityShards: Int, into directory: FilePath,
        kernel: ReedSolomonKernel, maximumBlockSize: Int,
        afterStripe: (Int) throws(CodingError) -> Void = { _ throws(CodingError) in }
    ) throws(CodingError) -> ShardIndex {
        let code = try ReedSolomonCode(dataShards: dataShards, parityShards: parityShards)
        let input = try guarded { () throws(IOError) in try GuardedFile(path: path) }
        try checkEncodeTarget(directory, input: path)
        let fileSize = Int(input.identity.size)
        let shardSize = ShardIndex.shardSize(fileSize: fileSize, code: code)
        let fileSHA256 = try sha256(of: input, size: fileSize)

        let staging = try guarded { () throws(IOError) in try DirectorySwap.makeStagingDirectory(besides: directory) }
        var committed = false
        defer { if !committed { removeSet(staging, totalShards: code.totalShards) } }
        var outputs: [ShardFile] = []
        for index in 0..<code.totalShards {
            outputs.append(try ShardFile.create(staging.appending(ShardIndex.shardFileName(index))))
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
                    let got = try guarded { () throws(IOError) in
                        try unsafe input.read(
                            at: Int64(start), into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<available]))
                    }
                    guard got == available else {
                        throw CodingError(.fileChanged, "\(path) shrank while it was encoded")
                    }
                    unsafe UnsafeMutableRawBufferPointer(rebasing: raw[available..<length]).initializeMemory(
                        as: UInt8.self, repeating: 0)
                }
            }
            try afterStripe(offset)
            // Every stripe is checked against the version the file digest was taken from.
            try guarded { () throws(IOError) in try input.verifyUnchanged() }
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
        try guarded { () throws(IOError) in try input.verifyUnchanged() }
        for output in outputs { try output.sync() }
        outputs.removeAll()
        let index = try ShardIndex(
            code: code, fileSize: fileSize, shardDigests: hashers.map { $0.finalize() }, fileSHA256: fileSHA256)
        let indexFile = try ShardFile.create(staging.appending(ShardIndex.fileName))
        try indexFile.write(index.encoded())
        try indexFile.sync()
        try ShardFile.syncDirectory(staging)
        // The last look before the switch: the file is still the version every shard was cut from.
        try guarded { () throws(IOError) in try input.verifyUnchanged() }
        let previous = try guarded { () throws(IOError) in try DirectorySwap.replace(directory, with: staging) }
        committed = true
        // The new set is in place; the old one is only garbage now, so a failure to remove it is harmless.
        if let previous { removeSet(previous, totalShards: nil) }
        return index
    }

    /// Reads and validates `directory/index.json` (a regular file of at most 16 MiB).
    public static func readIndex(directory: FilePath) throws(CodingError) -> ShardIndex {
        try readIndex(directory: directory).index
    }

    /// `readIndex` with the directory given as text.
    public static func readIndex(directory: String) throws(CodingError) -> ShardIndex {
        try readIndex(directory: FilePath(directory))
    }

    private static func readIndex(directory: FilePath) throws(CodingError) -> (
        index: ShardIndex, identity: FileIdentity
    ) {
        let path = directory.appending(ShardIndex.fileName)
        let file: GuardedFile
        do {
            file = try GuardedFile(path: path)
        } catch  where error.errno == ENOENT {
            throw CodingError(.malformedIndex, "no index at \(path)")
        } catch {
            throw CodingError(error)
        }
        let bytes: [UInt8]
        do {
            bytes = try file.readAll(maximumBytes: ShardIndex.maximumIndexBytes)
        } catch  where error.code == .invalidArgument {
            throw CodingError(.malformedIndex, "index \(path) is larger than an index can be")
        } catch {
            throw CodingError(error)
        }
        return (try ShardIndex(json: bytes), file.identity)
    }

    /// Rebuilds the file described by `directory/index.json` into `output` from any k shards that have
    /// the right size and digest (missing, wrong-size and damaged shards are erasures). The result is
    /// written to a temporary file beside `output`, checked against every data shard digest and against
    /// the file's SHA-256 (`expectedSHA256` when given, else the index's), synced and only then renamed
    /// over `output`; on any error `output` is untouched. A new `output` gets mode 0666 less the umask;
    /// an existing one keeps its permission bits.
    @discardableResult
    public static func decode(
        directory: FilePath, to output: FilePath, expectedSHA256: Digest32? = nil,
        kernel: ReedSolomonKernel = .automatic
    ) throws(CodingError) -> ShardFileDecodeReport {
        try decode(
            directory: directory, to: output, expectedSHA256: expectedSHA256, kernel: kernel,
            maximumBlockSize: 1 << 20)
    }

    /// `decode` with paths given as text.
    @discardableResult
    public static func decode(
        directory: String, to output: String, expectedSHA256: Digest32? = nil,
        kernel: ReedSolomonKernel = .automatic
    ) throws(CodingError) -> ShardFileDecodeReport {
        try decode(directory: FilePath(directory), to: FilePath(output), expectedSHA256: expectedSHA256, kernel: kernel)
    }

    /// `decode` with the per-shard block of each stripe capped at `maximumBlockSize`.
    static func decode(
        directory: FilePath, to output: FilePath, expectedSHA256: Digest32?, kernel: ReedSolomonKernel,
        maximumBlockSize: Int
    ) throws(CodingError) -> ShardFileDecodeReport {
        let (index, indexIdentity) = try readIndex(directory: directory)
        let authenticator = try fileAuthenticator(index: index, expected: expectedSHA256, directory: directory)
        let code = index.code
        var files: [GuardedFile?] = []
        var inputs = [indexIdentity]
        var missing: [Int] = []
        var wrongSize: [Int] = []
        for shard in 0..<code.totalShards {
            let path = directory.appending(ShardIndex.shardFileName(shard))
            let file: GuardedFile
            do {
                file = try GuardedFile(path: path)
            } catch  where error.errno == ENOENT {
                missing.append(shard)
                files.append(nil)
                continue
            } catch {
                throw CodingError(error)
            }
            inputs.append(file.identity)
            if file.identity.size == Int64(index.shardSize) {
                files.append(file)
            } else {
                wrongSize.append(shard)
                files.append(nil)
            }
        }
        try guarded { () throws(IOError) in
            let set = try FileIdentity.current(directory)
            try OutputGuard.check(output: output, inputs: inputs, directories: set.map { [$0] } ?? [])
        }
        // AetherIO's one atomic writer, streaming: a new output honours the umask, a replaced one keeps its
        // mode; whatever is not committed (any error below) is removed, and `output` is never touched before.
        let temporary = try guarded { () throws(IOError) in try AtomicFile.Staged(replacing: output) }
        defer { temporary.discard() }
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
            let rebuiltSHA256 = try sha256(of: temporary, size: index.fileSize)
            guard rebuiltSHA256 == authenticator else {
                throw CodingError(
                    .verificationFailed,
                    "the rebuilt file's SHA-256 \(rebuiltSHA256.hex) is not the file's \(authenticator.hex): "
                        + "the index or the shards were altered; \(output) was not written")
            }
            try guarded { () throws(IOError) in try temporary.commit() }
            return ShardFileDecodeReport(
                index: index, inputShards: decoder.inputShards, rebuiltDataShards: decoder.missingDataShards,
                missingShards: missing, wrongSizeShards: wrongSize, corruptShards: corrupt.sorted())
        }
    }

    /// The SHA-256 the rebuilt file must have.
    private static func fileAuthenticator(
        index: ShardIndex, expected: Digest32?, directory: FilePath
    ) throws(CodingError) -> Digest32 {
        switch (index.fileSHA256, expected) {
        case (let recorded?, let expected?):
            guard recorded == expected else {
                throw CodingError(
                    .verificationFailed,
                    "the index in \(directory) describes a file with SHA-256 \(recorded.hex), not \(expected.hex)")
            }
            return recorded
        case (let recorded?, nil): return recorded
        case (nil, let expected?): return expected
        case (nil, nil):
            throw CodingError(
                .unverifiableIndex,
                "\(directory) holds an \(ShardIndex.formatWithoutFileDigest) index, which records no SHA-256 of "
                    + "the file, so a rebuild cannot be checked; pass the file's SHA-256 "
                    + "(--expect-sha256) or encode the file again")
        }
    }

    /// One decoding pass into `output`; returns the input shards whose digest did not match (empty on
    /// success). Rebuilt shards that do not match while every input does is `.verificationFailed`.
    private static func rebuild(
        index: ShardIndex, decoder: ReedSolomonDecoder, files: [GuardedFile?], into output: AtomicFile.Staged,
        maximumBlockSize: Int
    ) throws(CodingError) -> [Int] {
        let code = index.code
        let shardSize = index.shardSize
        let fileSize = index.fileSize
        try guarded { () throws(IOError) in
            try output.truncate(to: 0)
            try output.truncate(to: Int64(fileSize))
        }
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
                    let got = try guarded { () throws(IOError) in
                        try unsafe file.read(
                            at: Int64(offset), into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<length]))
                    }
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
                    try guarded { () throws(IOError) in
                        try unsafe output.write(UnsafeRawBufferPointer(rebasing: raw[0..<count]), at: Int64(start))
                    }
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

    // MARK: helpers

    /// The target of an encode must be a directory that is missing, empty, or holds only a shard set
    /// (the set is replaced whole, so anything else in it would be lost), must not be a symbolic link
    /// (the switch would move the link, not the set), and must not hold the input.
    static func checkEncodeTarget(_ directory: FilePath, input: FilePath) throws(CodingError) {
        let name = directory.lastComponent
        guard name != FilePath("."), name != FilePath(".."), name != FilePath("/"), !name.isEmpty else {
            throw CodingError(
                .invalidParameters, "\(directory) cannot be switched as a whole; name the shard directory itself")
        }
        guard let target = try guarded({ () throws(IOError) in try FileIdentity.current(directory) }) else { return }
        guard target.isDirectory else {
            throw CodingError(
                .fileSystem, "\(directory) exists and is not a directory; give a directory for the shards")
        }
        if try guarded({ () throws(IOError) in try FileIdentity.isSymbolicLink(directory) }) {
            throw CodingError(
                .fileSystem, "\(directory) is a symbolic link; give the directory it points to")
        }
        if let parent = try guarded({ () throws(IOError) in try FileIdentity.current(input.directory) }),
            parent.isSameFile(as: target)
        {
            throw CodingError(
                .outputIsInput,
                "\(input) lies inside \(directory), which the new shard set replaces; encode into another directory")
        }
        for entry in try ShardFile.entries(of: directory) where !isShardSetName(entry) {
            throw CodingError(
                .outputIsInput,
                "\(directory) holds \(entry), which is not part of a shard set and would be lost; "
                    + "encode into a new or empty directory")
        }
    }

    /// `index.json`, `shard-NNNNN.bin` (five or more digits) or a fountain set's `packet-SSS-EEEEEEEE.bin`.
    static func isShardSetName(_ name: FilePath) -> Bool {
        if name == FilePath(ShardIndex.fileName) { return true }
        let bytes = name.bytes
        let packet = Array("packet-".utf8)
        if bytes.starts(with: packet), bytes.count == packet.count + 3 + 1 + 8 + 4,
            bytes.suffix(4).elementsEqual(".bin".utf8)
        {
            let digits = bytes[packet.count..<(bytes.count - 4)]
            return digits.enumerated().allSatisfy { offset, byte in
                offset == 3 ? byte == UInt8(ascii: "-") : (0x30...0x39).contains(byte)
            }
        }
        let prefix = Array("shard-".utf8)
        let suffix = Array(".bin".utf8)
        guard bytes.count >= prefix.count + 5 + suffix.count, bytes.starts(with: prefix),
            Array(bytes.suffix(suffix.count)) == suffix
        else { return false }
        return bytes[prefix.count..<(bytes.count - suffix.count)].allSatisfy { (0x30...0x39).contains($0) }
    }

    /// Removes a shard set directory: its shard files and index, then the directory. Best effort: what
    /// is left is a hidden directory beside the target, never part of the live set.
    static func removeSet(_ directory: FilePath, totalShards: Int?) {
        let names: [FilePath]
        if let totalShards {
            names = (0..<totalShards).map { FilePath(ShardIndex.shardFileName($0)) } + [FilePath(ShardIndex.fileName)]
        } else {
            names = ((try? ShardFile.entries(of: directory)) ?? []).filter(isShardSetName)
        }
        for name in names { try? ShardFile.remove(directory.appending(name)) }
        try? ShardFile.removeDirectory(directory)
    }

    /// SHA-256 of the first `size` bytes of a guarded input, read in order, checked unchanged as it goes.
    private static func sha256(of file: GuardedFile, size: Int) throws(CodingError) -> Digest32 {
        try unsafe sha256(size: size) { (offset, buffer) throws(CodingError) in
            let got = try guarded { () throws(IOError) in try unsafe file.read(at: Int64(offset), into: buffer) }
            try guarded { () throws(IOError) in try file.verifyUnchanged() }
            return got
        }
    }

    /// SHA-256 of the first `size` bytes of a staged output, read back before it is committed.
    static func sha256(of file: AtomicFile.Staged, size: Int) throws(CodingError) -> Digest32 {
        try unsafe sha256(size: size) { (offset, buffer) throws(CodingError) in
            try guarded { () throws(IOError) in try unsafe file.read(at: Int64(offset), into: buffer) }
        }
    }

    private static func sha256(
        size: Int, read: (Int, UnsafeMutableRawBufferPointer) throws(CodingError) -> Int
    ) throws(CodingError) -> Digest32 {
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = 0
        while offset < size {
            let want = min(buffer.count, size - offset)
            var outcome: Result<Int, CodingError> = .success(0)
            unsafe buffer.withUnsafeMutableBytes { raw in
                outcome = Result { () throws(CodingError) -> Int in
                    let got = try unsafe read(offset, UnsafeMutableRawBufferPointer(rebasing: raw[0..<want]))
                    unsafe hasher.update(UnsafeRawBufferPointer(rebasing: raw[0..<got]))
                    return got
                }
            }
            let got = try outcome.get()
            guard got == want else {
                throw CodingError(.fileChanged, "a file ended at \(offset + got) of \(size) bytes while it was read")
            }
            offset += got
        }
        return hasher.finalize()
    }

    /// Runs an AetherIO call, carrying its error over as a `CodingError`.
    static func guarded<T>(_ body: () throws(IOError) -> T) throws(CodingError) -> T {
        do { return try body() } catch { throw CodingError(error) }
    }
}
