import AetherIO
public import AetherTransport
import Synchronization

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
/// Reading a stream needs its pieces' layout: a listing of the piece folder. The store keeps the pieces it has
/// seen per stream (listed, or region pieces its own writers committed): a piece is written once and never changed,
/// so a read whose range the seen region pieces cover whole is served without listing again (a piece committed
/// since by another writer of the same region holds the same verified bytes); any other read, a stream with append
/// pieces, or a seen piece gone (404) lists the folder. Pieces of one read, and the parts of a completion, are
/// fetched several at a time (`parallelRequests`).
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

        /// The smallest native chunk the receiver takes on this store (`BlobStore.minimumChunkSize`); nil: the part
        /// floor, so that every chunk but the last is a piece the completion copies server side. 0 takes any chunk
        /// the receiver's limits take: pieces under the part floor are then read back and sent again at completion.
        public var minimumChunkSize: Int?

        /// Options; by default 5 MiB parts, 8 MiB pieces and chunks of at least a part.
        public init(minimumPartSize: Int = 5 << 20, pieceSize: Int = 8 << 20, minimumChunkSize: Int? = nil) {
            self.minimumPartSize = max(minimumPartSize, 1)
            self.pieceSize = max(pieceSize, self.minimumPartSize)
            self.minimumChunkSize = minimumChunkSize.map { max($0, 0) }
        }
    }

    /// The client of the bucket.
    public let client: S3ObjectClient
    /// The key prefix, without a trailing slash (empty: the bucket's root).
    public let prefix: String
    /// Tunables.
    public let options: Options
    /// Pieces seen per stream (see the type's comment), by key.
    private let seen = Mutex<[UploadID: [String: S3BlobPiece]]>([:])
    /// S3 requests of one read or one completion in flight at once.
    static let parallelRequests = 8
    /// Server-side part copies of one completion in flight at once (they hold no bytes here).
    static let parallelCopies = 16

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

    /// The committed pieces of `id`'s stream, listed; the seen pieces become the listing (and the region pieces this
    /// store's writers committed that the listing does not show yet).
    func pieces(of id: UploadID) throws(ReceiverError) -> [S3BlobPiece] {
        let client = self.client
        let folder = pieceFolder(id)
        let listed = try Self.s3 { () async throws(TransportError) in try await client.listObjects(prefix: folder) }
        let pieces = listed.compactMap { S3BlobPiece(listed: $0, folder: folder) }
        seen.withLock { seen in
            let own = (seen[id] ?? [:]).filter { $0.value.isOwn }
            var now = Dictionary(pieces.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
            for (key, piece) in own where now[key] == nil { now[key] = piece }
            seen[id] = now
        }
        return pieces
    }

    /// Records a region piece one of this store's writers committed.
    func remember(_ piece: S3BlobPiece, of id: UploadID) {
        guard piece.kind == .region else { return }
        seen.withLock { $0[id, default: [:]][piece.key] = piece }
    }

    /// Forgets the pieces seen of `id` (its stream deleted).
    func forget(_ id: UploadID) {
        seen.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// The segments of the seen pieces of `id` over `range`, when they are all region pieces and cover it whole.
    func seenSegments(_ id: UploadID, covering range: Range<Int64>) -> [S3BlobPiece.Segment]? {
        guard let pieces = seen.withLock({ $0[id] }), !pieces.isEmpty,
            pieces.values.allSatisfy({ $0.kind == .region })
        else { return nil }
        let segments = S3BlobPiece.layout(Array(pieces.values)).segments.filter {
            $0.end > range.lowerBound && $0.start < range.upperBound
        }
        var position = range.lowerBound
        for segment in segments {
            guard segment.start <= position else { return nil }
            position = max(position, segment.end)
        }
        return position >= range.upperBound ? segments : nil
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
        let wanted = offset..<(offset + Int64(buffer.count))
        if let segments = seenSegments(id, covering: wanted) {
            do {
                try unsafe fill(buffer, offset: offset, stop: wanted.upperBound, segments: segments)
                return buffer.count
            } catch {
                // A seen piece gone (deleted since) is found by listing again, below.
                guard error.code == .gone else { throw Self.storageError(error) }
            }
        }
        let (segments, end) = S3BlobPiece.layout(try pieces(of: id))
        guard offset < end else { return 0 }
        let stop = min(end, wanted.upperBound)
        let count = Int(stop - offset)
        unsafe UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]).initializeMemory(as: UInt8.self, repeating: 0)
        do {
            try unsafe fill(buffer, offset: offset, stop: stop, segments: segments)
        } catch {
            throw Self.storageError(error)
        }
        return count
    }

    /// Copies the bytes of `segments` between `offset` and `stop` into `buffer` (which starts at `offset`), the
    /// pieces fetched several at a time.
    private func fill(
        _ buffer: UnsafeMutableRawBufferPointer, offset: Int64, stop: Int64, segments: [S3BlobPiece.Segment]
    ) throws(TransportError) {
        let parts = segments.compactMap { segment -> Fetch? in
            let from = max(segment.start, offset)
            let to = min(segment.end, stop)
            guard to > from else { return nil }
            let inPiece = from - segment.piece.start
            return Fetch(key: segment.piece.key, range: inPiece..<(inPiece + (to - from)), at: Int(from - offset))
        }
        let client = self.client
        let fetched = try S3BlobBridge.run { () async throws(TransportError) in try await Self.fetch(client, parts) }
        for (part, bytes) in zip(parts, fetched) {
            guard Int64(bytes.count) == part.range.count else {
                throw TransportError(.protocolViolation, "piece \(part.key) holds fewer bytes than its name says")
            }
            unsafe Self.copy(bytes[...], into: buffer, at: part.at)
        }
    }

    /// One ranged read of a piece, and where its bytes go.
    struct Fetch: Sendable {
        let key: String
        let range: Range<Int64>
        var at = 0
    }

    /// The bytes of `parts`, in order, fetched at most `parallelRequests` at a time.
    static func fetch(_ client: S3ObjectClient, _ parts: [Fetch]) async throws(TransportError) -> [[UInt8]] {
        var results = [[UInt8]](repeating: [], count: parts.count)
        do {
            try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
                var next = 0
                func start() {
                    let index = next
                    let part = parts[index]
                    next += 1
                    group.addTask { (index, try await client.getObject(part.key, range: part.range)) }
                }
                while next < min(parts.count, parallelRequests) { start() }
                while let (index, bytes) = try await group.next() {
                    results[index] = bytes
                    if next < parts.count { start() }
                }
            }
        } catch let error as TransportError {
            throw error
        } catch {
            throw TransportError(.cancelled, "S3 reads were cancelled")
        }
        return results
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
            forget(id)
            try Self.s3 { () async throws(TransportError) in try await Self.deleteAll(names, client: client) }
            return
        }
        let name = objectKey(key)
        try Self.s3 { () async throws(TransportError) in try await client.deleteObject(name) }
    }

    public func deleteWorkingBlobs(of upload: UploadID) throws(ReceiverError) {
        forget(upload)
        let client = self.client
        let folders = [pieceFolder(upload), path("chunks/\(upload.rawValue)/"), path("parity/\(upload.rawValue)/")]
        try Self.s3 { () async throws(TransportError) in
            for folder in folders {
                try await Self.deleteAll(try await client.listObjects(prefix: folder).map(\.key), client: client)
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

    /// `options.minimumChunkSize`, by default S3's part floor (`options.minimumPartSize`): a chunk that size or
    /// larger is one piece that the completion copies server side as a part (`UploadPartCopy`); smaller ones are
    /// read back and sent again. Measured on Ceph RGW, 1 GiB through one receiver: 28.5 s in chunks of 1 MiB,
    /// 18.0 s in chunks of 5 MiB. The engine rounds it up to a multiple of 16 KiB.
    public var minimumChunkSize: Int { options.minimumChunkSize ?? options.minimumPartSize }

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
        let plan = Self.plan(segments, minimum: minimum, partTarget: Int64(partTarget))
        try Self.s3 { () async throws(TransportError) in
            let uploadID = try await client.createMultipartUpload(target)
            do throws(TransportError) {
                let parts = try await Self.send(plan, to: target, uploadID: uploadID, client: client)
                try await client.completeMultipartUpload(target, uploadID: uploadID, parts: parts)
            } catch {
                try? await client.abortMultipartUpload(target, uploadID: uploadID)
                throw error
            }
        }
    }

    /// Deletes `keys`, `parallelRequests` at a time (a completed GiB of 1 MiB chunks leaves 1,024 pieces, which
    /// one after another kept RGW busy for 6 s after the completion).
    static func deleteAll(_ keys: [String], client: S3ObjectClient) async throws(TransportError) {
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = 0
                func start() {
                    let key = keys[next]
                    next += 1
                    group.addTask { try await client.deleteObject(key) }
                }
                while next < min(keys.count, parallelRequests) { start() }
                while try await group.next() != nil {
                    if next < keys.count { start() }
                }
            }
        } catch let error as TransportError {
            throw error
        } catch {
            throw TransportError(.cancelled, "S3 deletes were cancelled")
        }
    }

    /// One part of a composed object: a server-side copy of (a range of) one piece, or ranges of pieces read and
    /// sent as one part.
    enum PlannedPart: Sendable {
        case copy(key: String, range: Range<Int64>?)
        case buffered([Fetch])
    }

    /// The parts that compose `segments`, in order: a piece of `minimum` bytes or more met with nothing buffered
    /// before it is copied server side; smaller runs are buffered into parts of at least `minimum` bytes (a part
    /// but the last may not be smaller), sent once `partTarget` bytes are buffered.
    static func plan(_ segments: [S3BlobPiece.Segment], minimum: Int64, partTarget: Int64) -> [PlannedPart] {
        var parts: [PlannedPart] = []
        var buffered: [Fetch] = []
        var bufferedBytes: Int64 = 0
        func flush() {
            guard !buffered.isEmpty else { return }
            parts.append(.buffered(buffered))
            buffered = []
            bufferedBytes = 0
        }
        func take(_ segment: S3BlobPiece.Segment, from: Int64, count: Int64) {
            let inPiece = from - segment.piece.start
            buffered.append(Fetch(key: segment.piece.key, range: inPiece..<(inPiece + count)))
            bufferedBytes += count
        }
        for segment in segments {
            var from = segment.start
            // Fill a started buffer up to the minimum first.
            if !buffered.isEmpty, bufferedBytes < minimum {
                let count = min(segment.end - from, minimum - bufferedBytes)
                take(segment, from: from, count: count)
                from += count
                if bufferedBytes >= minimum { flush() }
            }
            let rest = segment.end - from
            guard rest > 0 else { continue }
            if buffered.isEmpty, rest >= minimum {
                let inPiece = from - segment.piece.start
                let whole = inPiece == 0 && rest == segment.piece.length
                parts.append(.copy(key: segment.piece.key, range: whole ? nil : inPiece..<(inPiece + rest)))
            } else {
                take(segment, from: from, count: rest)
                if bufferedBytes >= partTarget { flush() }
            }
        }
        flush()
        return parts
    }

    /// Sends the planned parts of `target`, at most `parallelRequests / 2` parts at a time (each buffered part's
    /// ranges fetched several at a time); the completed parts in order.
    static func send(_ plan: [PlannedPart], to target: String, uploadID: String, client: S3ObjectClient)
        async throws(TransportError) -> [S3ObjectClient.CompletedPart]
    {
        var tags = [String](repeating: "", count: plan.count)
        do {
            try await withThrowingTaskGroup(of: (Int, String).self) { group in
                var next = 0
                func start() {
                    let index = next
                    let part = plan[index]
                    next += 1
                    group.addTask {
                        let number = index + 1
                        switch part {
                        case .copy(let key, let range):
                            return (
                                index,
                                try await client.uploadPartCopy(
                                    target, uploadID: uploadID, number: number, source: key, range: range)
                            )
                        case .buffered(let fetches):
                            let bytes = try await fetch(client, fetches).flatMap { $0 }
                            return (
                                index,
                                try await client.uploadPart(target, uploadID: uploadID, number: number, bytes: bytes)
                            )
                        }
                    }
                }
                let copiesOnly = plan.allSatisfy { if case .copy = $0 { true } else { false } }
                let limit = copiesOnly ? parallelCopies : max(1, parallelRequests / 2)
                while next < min(plan.count, limit) { start() }
                while let (index, tag) = try await group.next() {
                    tags[index] = tag
                    if next < plan.count { start() }
                }
            }
        } catch let error as TransportError {
            throw error
        } catch {
            throw TransportError(.cancelled, "S3 parts were cancelled")
        }
        return tags.enumerated().map { S3ObjectClient.CompletedPart(number: $0.offset + 1, entityTag: $0.element) }
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
