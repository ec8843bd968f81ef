/// Where chunk, parity-shard, stream and object bytes live. Shaped so that an S3 store can implement it: the API
/// names blobs by `BlobKey` and moves bytes through buffers; no descriptor or path crosses it.
///
/// Durability contract: a blob written through `stage` is invisible under its key until `commit()` returns, and
/// after that it survives a crash. An append writer's bytes survive a crash once `durable()` returns.
public protocol BlobStore: Sendable {
    /// A writer for a new blob named `key`, invisible until its `commit()`; committing replaces an existing blob.
    func stage(_ key: BlobKey) throws(ReceiverError) -> any BlobWriter
    /// A writer that appends to the byte stream `key` at `offset` (created empty when missing), after cutting off
    /// anything stored past `offset` (bytes written but never acknowledged). `commit()` makes them durable.
    func append(to key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter
    /// A writer of the region of the byte stream `key` that starts at `offset` (the file is created when missing;
    /// nothing else in it changes). `commit()` makes the bytes and the blob's name durable. Native chunks are
    /// written in place this way; which regions hold data is the catalogue's business (its receipts).
    func place(into key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter
    /// True when a region written through `place` and let go with `durable()` then `abandon()` keeps its bytes in
    /// place, so a cut chunk's received prefix can be continued later (`place(into:at:keeping:)`). Default: false.
    var keepsCutPrefixes: Bool { get }
    /// A writer of the region at `offset` whose first `kept` bytes are already in place and durable (a cut chunk's
    /// received prefix): it writes from `offset + kept`, counts `kept` in `bytesWritten`, and a discard undoes the
    /// whole region. Only where `keepsCutPrefixes`; the default refuses.
    func place(into key: BlobKey, at offset: Int64, keeping kept: Int64) throws(ReceiverError) -> any BlobWriter
    /// Creates the byte stream `key` as `size` zero bytes (sparse where the file system allows it), durably; an
    /// existing one is left as it is. A native upload's stream is reserved at creation, so that a chunk refused
    /// later (its region zeroed again) leaves the stored files exactly as they were.
    func reserve(_ key: BlobKey, size: Int64) throws(ReceiverError)
    /// Reads up to `buffer.count` bytes of `key` at `offset`; fewer only at the end of the blob.
    func read(_ key: BlobKey, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(ReceiverError)
        -> Int
    /// The blob's length, nil when it does not exist.
    func size(of key: BlobKey) throws(ReceiverError) -> Int64?
    /// Makes the blob `from` visible as `to` in one atomic, durable step (a stream becoming an object).
    func promote(_ from: BlobKey, to: BlobKey) throws(ReceiverError)
    /// Makes `existing`'s bytes visible also as `alias` (dedup: a second object with the same content).
    func alias(_ existing: BlobKey, as alias: BlobKey) throws(ReceiverError)
    /// Deletes `key`; a missing blob is not an error.
    func delete(_ key: BlobKey) throws(ReceiverError)
    /// Deletes every chunk, parity shard and the stream of `upload` (not its object).
    func deleteWorkingBlobs(of upload: UploadID) throws(ReceiverError)
    /// Every blob the store holds (for recovery).
    func keys() throws(ReceiverError) -> [BlobKey]
    /// Removes staged blobs that were never committed (a crash left them); returns how many.
    func discardStaging() throws(ReceiverError) -> Int
    /// True when other receivers write this store at the same time (a fleet's bucket): start-up recovery then
    /// changes nothing in it, since another receiver's write may lie between its bytes and its catalogue commit.
    var sharedWithOtherReceivers: Bool { get }
    /// The smallest native chunk this store keeps well, in bytes (0: no floor of its own). The S3 store of a fleet
    /// writes each chunk as one piece object and composes the object from its pieces; a piece under S3's part floor
    /// cannot be copied as a part and is read back and sent again, so that store asks for chunks of at least the
    /// floor. The receiver advertises and enforces the larger of this and its `min-chunk` limit.
    var minimumChunkSize: Int { get }
    /// Calls `body` with the whole blob `key`, in order, in pieces of at most `pieceSize` bytes (none for an empty
    /// blob). The default reads into a buffer; a store that can hand out its bytes without a copy does so.
    func forEachPiece(
        of key: BlobKey, pieceSize: Int, _ body: (UnsafeRawBufferPointer) throws(ReceiverError) -> Void
    ) throws(ReceiverError)
}

/// Writes one blob. Owned by one request at a time (not `Sendable`).
public protocol BlobWriter: AnyObject {
    /// Bytes written so far.
    var bytesWritten: Int64 { get }
    /// Appends `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws(ReceiverError)
    /// Puts the bytes written so far on stable storage (fsync).
    func durable() throws(ReceiverError)
    /// Makes the blob durable and visible under its key (for an append writer: durable).
    func commit() throws(ReceiverError)
    /// Drops a staged blob (nothing becomes visible); an append writer leaves the stored prefix as it was.
    func discard()
    /// Lets go of the blob without undoing anything: another writer now owns the region this one wrote into (a
    /// newer request took a chunk over). The default discards.
    func abandon()
    /// Takes back a committed append whose offset the catalogue gave to another receiver of a fleet (its bytes
    /// must not shadow the ones acknowledged). The default does nothing: a store where appends are cut in place
    /// has nothing left to undo.
    func retract()
}

extension BlobWriter {
    public func abandon() { discard() }
    public func retract() {}
}

extension BlobStore {
    /// One receiver's own store, by default.
    public var sharedWithOtherReceivers: Bool { false }

    /// No chunk size floor of the store's own, by default.
    public var minimumChunkSize: Int { 0 }

    /// No cut prefix is kept, by default.
    public var keepsCutPrefixes: Bool { false }

    public func place(into key: BlobKey, at offset: Int64, keeping kept: Int64) throws(ReceiverError)
        -> any BlobWriter
    {
        throw ReceiverError(.storageFailed, "this blob store keeps no received prefix of a cut chunk")
    }

    /// Assembles `parts` in order into a staged blob named `target`, streaming: each piece read is handed to
    /// `observe` (to hash it) and written. The result is durable but invisible until the caller commits it, so a
    /// check of what `observe` saw can still refuse it (`discard()`).
    public func assemble(
        _ target: BlobKey, from parts: [BlobKey], bufferSize: Int = 1 << 20,
        observe: (UnsafeRawBufferPointer) throws(ReceiverError) -> Void
    ) throws(ReceiverError) -> any BlobWriter {
        let writer = try stage(target)
        do throws(ReceiverError) {
            for part in parts {
                try unsafe forEachPiece(of: part, pieceSize: bufferSize) { piece throws(ReceiverError) in
                    try unsafe observe(piece)
                    try unsafe writer.write(piece)
                }
            }
            try writer.durable()
        } catch {
            writer.discard()
            throw error
        }
        return writer
    }

    /// `forEachPiece` through `read` into one buffer of `pieceSize` bytes.
    public func forEachPiece(
        of key: BlobKey, pieceSize: Int, _ body: (UnsafeRawBufferPointer) throws(ReceiverError) -> Void
    ) throws(ReceiverError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(pieceSize, 1), alignment: 64)
        defer { unsafe buffer.deallocate() }
        var offset: Int64 = 0
        while true {
            let count = try unsafe read(key, at: offset, into: buffer)
            if count == 0 { break }
            try unsafe body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
        }
    }

    /// The whole blob `key` into memory (chunks and shards, bounded by the chunk size limit).
    public func readAll(_ key: BlobKey, expectedLength: Int) throws(ReceiverError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: expectedLength)
        let count = try unsafe ByteBuffers.withMutableRaw(&bytes) { raw throws(ReceiverError) in
            try unsafe read(key, at: 0, into: raw)
        }
        guard count == expectedLength else {
            throw ReceiverError(.storageFailed, "\(key) holds \(count) bytes, \(expectedLength) were stored")
        }
        return bytes
    }
}

extension BlobWriter {
    /// Appends `bytes`.
    public func write(_ bytes: [UInt8]) throws(ReceiverError) {
        try unsafe ByteBuffers.withRaw(bytes) { raw throws(ReceiverError) in try unsafe write(raw) }
    }
}
