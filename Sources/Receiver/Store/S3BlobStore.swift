import AetherIO
public import AetherTransport

/// The fleet blob store: blobs in one S3 bucket under one prefix, so that several receivers share them.
///
/// ```
/// PREFIX/objects/<id>                     completed objects: an S3 multipart upload of the receiver's own
/// PREFIX/parity/<id>/<group>.<shard>      parity shards (one PutObject each)
/// PREFIX/chunks/<id>/<index>              native chunks of older stores (read by recovery)
/// PREFIX/pieces/<id>/<start>-<length>-... the stream of an upload: one object per committed write (S3BlobPiece)
/// ```
/// S3 cannot read the parts of an unfinished multipart upload, and the engine reads a stream back before it
/// completes (the whole-object hash, challenges, chunk take-overs), so each committed write is its own piece
/// object, readable with ranged GETs. `promote(.stream, to: .object)` composes the pieces into a multipart upload
/// of the object key and completes it: pieces of `minimumPartSize` or more become parts by `UploadPartCopy`
/// (server side); runs of smaller pieces are read and buffered into parts of at least `minimumPartSize`.
/// Nothing is in S3 until a writer's `commit()` (or an append writer's flush) got its 200; a staged blob is held
/// in memory (or in an invisible multipart upload) until then, so `discardStaging()` has nothing to do and
/// returns 0: it must not touch what another live receiver is writing.
///
/// The API is synchronous and is called on the HTTP server's threads; each call waits for the S3 client through
/// `S3BlobBridge`. S3 failures map to `.unavailable` (503, the client retries: throttling, 5xx, a refused or lost
/// connection) or `.storageFailed` (507: access denied, the bucket missing).
public final class S3BlobStore: BlobStore {
    /// Tunables.
    public struct Options: Sendable {
        /// S3's smallest part but the last (5 MiB on AWS and moto).
        public var minimumPartSize: Int
        /// Bytes an append writer buffers before it commits them as a piece (memory bound of one append), and the
        /// size of the parts buffered at completion.
        public var pieceSize: Int

        /// Options; by default 5 MiB parts and 8 MiB pieces.
        public init(minimumPartSize: Int = 5 << 20, pieceSize: Int = 8 << 20) {
            self.minimumPartSize = max(minimumPartSize, 1)
            self.pieceSize = max(pieceSize, self.minimumPartSize)
        }
    }

    /// The client of the bucket.
    public let client: S3ObjectClient
    /// The key prefix, without a trailing slash (empty: the bucket's root).
    public let prefix: String
    /// Tunables.
    public let options: Options

    /// A store in `client`'s bucket under `prefix` (`a/b`, `a/b/` or empty).
    public init(client: S3ObjectClient, prefix: String, options: Options = Options()) {
        self.client = client
        var trimmed = Substring(prefix)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        while trimmed.hasPrefix("/") { trimmed = trimmed.dropFirst() }
        self.prefix = String(trimmed)
        self.options = options
    }

    /// Checks that the bucket exists and answers (at start, so that `aether serve` names the cause: the bucket
    /// missing, access denied, the endpoint unreachable).
    public func checkBucket() throws(ReceiverError) {
        let client = self.client
        do {
            try S3BlobBridge.run { () async throws(TransportError) in try await client.headBucket() }
        } catch {
            let bucket = client.bucket
            switch error.code {
            case .gone: throw ReceiverError(.storageFailed, "S3 bucket \(bucket) does not exist")
            case .accessDenied:
                throw ReceiverError(.storageFailed, "S3 refused access to bucket \(bucket): check the credentials")
            case .connectionRefused, .hostNotFound, .timedOut, .connectionClosed, .tlsHandshakeFailed,
                .certificateRejected:
                throw ReceiverError(.unavailable, "the S3 endpoint is unreachable: \(error.message)")
            default: throw Self.storageError(error)
            }
        }
    }

    // MARK: Keys

    func objectKey(_ key: BlobKey) -> String {
        switch key {
        case .chunk(let id, let index): path("chunks/\(id.rawValue)/\(index)")
        case .parity(let id, let group, let shard): path("parity/\(id.rawValue)/\(group).\(shard)")
        case .stream(let id): pieceFolder(id)
        case .object(let id): path("objects/\(id.rawValue)")
        }
    }

    func pieceFolder(_ id: UploadID) -> String { path("pieces/\(id.rawValue)/") }

    private func path(_ relative: String) -> String { prefix.isEmpty ? relative : "\(prefix)/\(relative)" }

    /// The committed pieces of `id`'s stream.
    func pieces(of id: UploadID) throws(ReceiverError) -> [S3BlobPiece] {
        let client = self.client
        let folder = pieceFolder(id)
        let listed = try Self.s3 { () async throws(TransportError) in try await client.listObjects(prefix: folder) }
        return listed.compactMap { S3BlobPiece(listed: $0, folder: folder) }
    }

    // MARK: BlobStore

    public func stage(_ key: BlobKey) throws(ReceiverError) -> any BlobWriter {
        if case .stream = key { throw ReceiverError(.malformedRequest, "a stream is appended to, not staged") }
        return S3StagedBlobWriter(store: self, key: objectKey(key))
    }

    public func append(to key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter {
        guard case .stream(let id) = key, offset >= 0 else {
            throw ReceiverError(.malformedRequest, "only a stream is appended to")
        }
        let end = S3BlobPiece.layout(try pieces(of: id)).end
        guard end >= offset else {
            throw ReceiverError(.storageFailed, "the stream is shorter than its recorded offset")
        }
        return S3PieceWriter(store: self, upload: id, kind: .append, start: offset)
    }

    public func place(into key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter {
        guard case .stream(let id) = key, offset >= 0 else {
            throw ReceiverError(.malformedRequest, "only a stream is written in place")
        }
        return S3PieceWriter(store: self, upload: id, kind: .region, start: offset)
    }

    /// Nothing is stored: a missing region of a stream is a gap, read as zeros (the engine reads only regions its
    /// receipts cover).
    public func reserve(_ key: BlobKey, size: Int64) throws(ReceiverError) {
        guard case .stream = key, size >= 0 else { throw ReceiverError(.malformedRequest, "only a stream is reserved") }
    }

    public func read(_ key: BlobKey, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(ReceiverError)
        -> Int
    {
        guard offset >= 0 else { throw ReceiverError(.malformedRequest, "a read starts at a negative offset") }
        guard buffer.count > 0 else { return 0 }
        let client = self.client
        guard case .stream(let id) = key else {
            let name = objectKey(key)
            let range = offset..<(offset + Int64(buffer.count))
            let bytes = try Self.s3 { () async throws(TransportError) in
                do throws(TransportError) {
                    return try await client.getObject(name, range: range)
                } catch  where error.message.contains("InvalidRange") {
                    return []  // at or past the end
                }
            }
            let count = min(bytes.count, buffer.count)
            unsafe Self.copy(bytes[0..<count], into: buffer, at: 0)
            return count
        }
        let (segments, end) = S3BlobPiece.layout(try pieces(of: id))
        guard offset < end else { return 0 }
        let stop = min(end, offset + Int64(buffer.count))
        let count = Int(stop - offset)
        unsafe UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]).initializeMemory(as: UInt8.self, repeating: 0)
        for segment in segments where segment.end > offset && segment.start < stop {
            let from = max(segment.start, offset)
            let to = min(segment.end, stop)
            let inPiece = from - segment.piece.start
            let name = segment.piece.key
            let bytes = try Self.s3 { () async throws(TransportError) in
                try await client.getObject(name, range: inPiece..<(inPiece + (to - from)))
            }
            guard Int64(bytes.count) == to - from else {
                throw ReceiverError(.storageFailed, "piece \(name) holds fewer bytes than its name says")
            }
            unsafe Self.copy(bytes[...], into: buffer, at: Int(from - offset))
        }
        return count
    }

    public func size(of key: BlobKey) throws(ReceiverError) -> Int64? {
        if case .stream(let id) = key {
            let found = try pieces(of: id)
            return found.isEmpty ? nil : S3BlobPiece.layout(found).end
        }
        let client = self.client
        let name = objectKey(key)
        return try Self.s3 { () async throws(TransportError) in try await client.headObject(name) }
    }

    public func promote(_ from: BlobKey, to: BlobKey) throws(ReceiverError) {
        switch (from, to) {
        case (.stream(let id), .object(let target)) where id == target:
            try composeObject(id)
        case (.object(let id), .stream(let target)) where id == target:
            // The pieces stay until the upload's working blobs are deleted, so the object only has to go; an object
            // whose pieces are gone becomes one append piece again.
            let client = self.client
            let object = objectKey(from)
            if try pieces(of: id).isEmpty, let size = try size(of: from) {
                let piece =
                    pieceFolder(id)
                    + S3BlobPiece.name(start: 0, length: size, kind: .append, time: Self.now(), nonce: Self.nonce())
                try Self.s3 { () async throws(TransportError) in try await client.copyObject(from: object, to: piece) }
            }
            try Self.s3 { () async throws(TransportError) in try await client.deleteObject(object) }
        default:
            throw ReceiverError(.malformedRequest, "\(from) cannot become \(to) in an S3 store")
        }
    }

    public func alias(_ existing: BlobKey, as alias: BlobKey) throws(ReceiverError) {
        let client = self.client
        let source = objectKey(existing)
        let target = objectKey(alias)
        guard let size = try size(of: existing) else {
            throw ReceiverError(.storageFailed, "\(existing) is missing, it cannot be aliased")
        }
        let copyLimit: Int64 = 5 << 30
        if size <= copyLimit {
            try Self.s3 { () async throws(TransportError) in try await client.copyObject(from: source, to: target) }
            return
        }
        // Larger than CopyObject takes: a multipart upload of server-side copied ranges.
        try Self.s3 { () async throws(TransportError) in
            let uploadID = try await client.createMultipartUpload(target)
            do throws(TransportError) {
                var parts: [S3ObjectClient.CompletedPart] = []
                var start: Int64 = 0
                while start < size {
                    let end = min(size, start + (1 << 30))
                    let number = parts.count + 1
                    let tag = try await client.uploadPartCopy(
                        target, uploadID: uploadID, number: number, source: source, range: start..<end)
                    parts.append(S3ObjectClient.CompletedPart(number: number, entityTag: tag))
                    start = end
                }
                try await client.completeMultipartUpload(target, uploadID: uploadID, parts: parts)
            } catch {
                try? await client.abortMultipartUpload(target, uploadID: uploadID)
                throw error
            }
        }
    }

    public func delete(_ key: BlobKey) throws(ReceiverError) {
        let client = self.client
        if case .stream(let id) = key {
            let names = try pieces(of: id).map(\.key)
            try Self.s3 { () async throws(TransportError) in for name in names { try await client.deleteObject(name) } }
            return
        }
        let name = objectKey(key)
        try Self.s3 { () async throws(TransportError) in try await client.deleteObject(name) }
    }

    public func deleteWorkingBlobs(of upload: UploadID) throws(ReceiverError) {
        let client = self.client
        let folders = [pieceFolder(upload), path("chunks/\(upload.rawValue)/"), path("parity/\(upload.rawValue)/")]
        try Self.s3 { () async throws(TransportError) in
            for folder in folders {
                for listed in try await client.listObjects(prefix: folder) { try await client.deleteObject(listed.key) }
            }
        }
    }

    public func keys() throws(ReceiverError) -> [BlobKey] {
        let client = self.client
        let root = prefix.isEmpty ? "" : prefix + "/"
        let listed = try Self.s3 { () async throws(TransportError) in try await client.listObjects(prefix: root) }
        var keys: [BlobKey] = []
        var streams = Set<UploadID>()
        for entry in listed {
            let parts = entry.key.dropFirst(root.count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count >= 2, let id = try? UploadID(String(parts[1])) else { continue }
            switch (parts[0], parts.count) {
            case ("objects", 2): keys.append(.object(id))
            case ("pieces", 3): if streams.insert(id).inserted { keys.append(.stream(id)) }
            case ("chunks", 3):
                if let index = Int(parts[2]), index >= 0, String(index) == parts[2] {
                    keys.append(.chunk(id, index: index))
                }
            case ("parity", 3):
                let numbers = parts[2].split(separator: ".", omittingEmptySubsequences: false)
                if numbers.count == 2, let group = Int(numbers[0]), let shard = Int(numbers[1]), group >= 0, shard >= 0
                {
                    keys.append(.parity(id, group: group, shard: shard))
                }
            default: continue
            }
        }
        return keys
    }

    /// 0: a staged blob is never in S3 before its commit (see the type's comment), and whatever another live
    /// receiver has in flight is not this one's to discard.
    public func discardStaging() throws(ReceiverError) -> Int { 0 }

    /// A bucket prefix is what several receivers of a fleet share.
    public var sharedWithOtherReceivers: Bool { true }

    // MARK: Completion

    /// `promote(.stream(id), to: .object(id))`: a multipart upload of the object key from the stream's pieces, in
    /// order; the parts are server-side copies of large pieces and buffers of small ones.
    private func composeObject(_ id: UploadID) throws(ReceiverError) {
        let (segments, end) = S3BlobPiece.layout(try pieces(of: id))
        var position: Int64 = 0
        for segment in segments {
            guard segment.start == position else {
                throw ReceiverError(.storageFailed, "the stream of \(id) has a gap at \(position)")
            }
            position = segment.end
        }
        guard position == end else {
            throw ReceiverError(.storageFailed, "the stream of \(id) has a gap at \(position)")
        }
        let client = self.client
        let target = objectKey(.object(id))
        let minimum = Int64(options.minimumPartSize)
        let partTarget = options.pieceSize
        if end == 0 {
            try Self.s3 { () async throws(TransportError) in _ = try await client.putObject(target, bytes: []) }
            return
        }
        try Self.s3 { () async throws(TransportError) in
            let uploadID = try await client.createMultipartUpload(target)
            do throws(TransportError) {
                var parts: [S3ObjectClient.CompletedPart] = []
                var buffer: [UInt8] = []
                func flush() async throws(TransportError) {
                    guard !buffer.isEmpty else { return }
                    let number = parts.count + 1
                    let tag = try await client.uploadPart(target, uploadID: uploadID, number: number, bytes: buffer)
                    parts.append(S3ObjectClient.CompletedPart(number: number, entityTag: tag))
                    buffer.removeAll(keepingCapacity: true)
                }
                for segment in segments {
                    var from = segment.start
                    // Fill a started buffer up to the minimum first (a part but the last may not be smaller).
                    if !buffer.isEmpty, buffer.count < minimum {
                        let take = min(segment.end - from, minimum - Int64(buffer.count))
                        let inPiece = from - segment.piece.start
                        buffer += try await client.getObject(segment.piece.key, range: inPiece..<(inPiece + take))
                        from += take
                        if buffer.count >= minimum { try await flush() }
                    }
                    let rest = segment.end - from
                    guard rest > 0 else { continue }
                    if buffer.isEmpty, rest >= minimum {
                        let number = parts.count + 1
                        let inPiece = from - segment.piece.start
                        let whole = inPiece == 0 && rest == segment.piece.length
                        let tag = try await client.uploadPartCopy(
                            target, uploadID: uploadID, number: number, source: segment.piece.key,
                            range: whole ? nil : inPiece..<(inPiece + rest))
                        parts.append(S3ObjectClient.CompletedPart(number: number, entityTag: tag))
                    } else {
                        let inPiece = from - segment.piece.start
                        buffer += try await client.getObject(segment.piece.key, range: inPiece..<(inPiece + rest))
                        if buffer.count >= partTarget { try await flush() }
                    }
                }
                try await flush()
                try await client.completeMultipartUpload(target, uploadID: uploadID, parts: parts)
            } catch {
                try? await client.abortMultipartUpload(target, uploadID: uploadID)
                throw error
            }
        }
    }

    // MARK: Helpers

    /// Runs one S3 exchange through the bridge and maps its failure to the receiver's error.
    @discardableResult
    static func s3<T: Sendable>(_ operation: @escaping @Sendable () async throws(TransportError) -> T)
        throws(ReceiverError) -> T
    {
        do {
            return try S3BlobBridge.run(operation)
        } catch {
            throw storageError(error)
        }
    }

    /// 503 for what passes (throttling, 5xx, an endpoint refusing or dropping connections, timeouts), 507 for the
    /// rest (access denied, a missing bucket); the message is the S3 client's, which names the operation and S3's
    /// code and never a credential.
    static func storageError(_ error: TransportError) -> ReceiverError {
        let passing: Set<TransportError.Code> = [
            .throttled, .serverFailed, .connectionRefused, .connectionClosed, .timedOut, .hostNotFound, .cancelled,
        ]
        let code: ReceiverError.Code = passing.contains(error.code) ? .unavailable : .storageFailed
        return ReceiverError(code, "S3 storage failed: \(error.message)")
    }

    static func copy(_ bytes: ArraySlice<UInt8>, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) {
        unsafe bytes.withUnsafeBytes { raw in
            unsafe UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + raw.count)]).copyMemory(from: raw)
        }
    }

    static func now() -> UInt64 { UInt64(max(0, SystemClock().wallNanoseconds())) }

    static func nonce() -> String { Hex.encode(SecureRandom.bytes(8)) }
}
