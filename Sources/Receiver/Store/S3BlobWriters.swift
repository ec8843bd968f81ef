import AetherTransport

/// A staged blob of an `S3BlobStore` (a parity shard, a tus final object): held in memory, or past `pieceSize` in a
/// multipart upload of the target key, which stays invisible until `commit()` completes it (or puts the bytes as
/// one object). `discard()` drops the buffer and aborts the multipart upload.
final class S3StagedBlobWriter: BlobWriter {
    private let store: S3BlobStore
    private let key: String
    private var buffer: [UInt8] = []
    private var uploadID: String?
    private var parts: [S3ObjectClient.CompletedPart] = []
    private var open = true
    private(set) var bytesWritten: Int64 = 0

    init(store: S3BlobStore, key: String) {
        self.store = store
        self.key = key
    }

    deinit { discard() }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ReceiverError) {
        guard open else { throw ReceiverError(.storageFailed, "the staged blob was closed") }
        unsafe buffer.append(contentsOf: bytes)
        bytesWritten += Int64(bytes.count)
        if buffer.count >= store.options.pieceSize { try sendPart() }
    }

    /// Nothing to do: a staged blob is whole or absent; a crash before `commit()` loses it in every store.
    func durable() throws(ReceiverError) {
        guard open else { throw ReceiverError(.storageFailed, "the staged blob was closed") }
    }

    func commit() throws(ReceiverError) {
        guard open else { throw ReceiverError(.storageFailed, "the staged blob was closed") }
        let client = store.client
        let key = self.key
        if uploadID == nil {
            let bytes = buffer
            try S3BlobStore.s3 { () async throws(TransportError) in try await client.putObject(key, bytes: bytes) }
        } else {
            if !buffer.isEmpty { try sendPart() }
            guard let uploadID else { return }
            let parts = self.parts
            try S3BlobStore.s3 { () async throws(TransportError) in
                try await client.completeMultipartUpload(key, uploadID: uploadID, parts: parts)
            }
        }
        open = false
        buffer = []
    }

    func discard() {
        guard open else { return }
        open = false
        buffer = []
        guard let uploadID else { return }
        let client = store.client
        let key = self.key
        _ = try? S3BlobStore.s3 { () async throws(TransportError) in
            try await client.abortMultipartUpload(key, uploadID: uploadID)
        }
    }

    private func sendPart() throws(ReceiverError) {
        let client = store.client
        let key = self.key
        if uploadID == nil {
            uploadID = try S3BlobStore.s3 { () async throws(TransportError) in
                try await client.createMultipartUpload(key)
            }
        }
        guard let uploadID else { return }
        let bytes = buffer
        let number = parts.count + 1
        let tag = try S3BlobStore.s3 { () async throws(TransportError) in
            try await client.uploadPart(key, uploadID: uploadID, number: number, bytes: bytes)
        }
        parts.append(S3ObjectClient.CompletedPart(number: number, entityTag: tag))
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Writes a stream of an `S3BlobStore` as pieces (`S3BlobPiece`): a native chunk region as one piece put by
/// `commit()`; an append as pieces of `pieceSize` put as they fill and the rest put by `commit()` (or by
/// `durable()`). A piece exists in S3 only after its PutObject answered 200. An append that committed nothing
/// still puts an empty piece at its offset: that is the cut of whatever lies past the offset, without deleting
/// it (another receiver may be about to acknowledge it: `S3BlobPiece.layout` orders by commit).
///
/// `discard()` deletes the pieces this writer put and nothing else (a piece name carries the writer's clock and
/// nonce, so two writers of one region never collide); after `commit()` it does nothing. `abandon()` forgets
/// them. `retract()` deletes a committed append's pieces when the catalogue gave its offset to another receiver.
final class S3PieceWriter: BlobWriter {
    private let store: S3BlobStore
    private let upload: UploadID
    private let kind: S3BlobPiece.Kind
    private let start: Int64
    private let time = S3BlobStore.now()
    private let nonce = S3BlobStore.nonce()
    private var buffer: [UInt8] = []
    private var flushed: Int64 = 0
    private var put: [String] = []
    private var open = true
    private(set) var bytesWritten: Int64 = 0

    init(store: S3BlobStore, upload: UploadID, kind: S3BlobPiece.Kind, start: Int64) {
        self.store = store
        self.upload = upload
        self.kind = kind
        self.start = start
    }

    deinit { discard() }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ReceiverError) {
        guard open else { throw ReceiverError(.storageFailed, "the blob was closed") }
        unsafe buffer.append(contentsOf: bytes)
        bytesWritten += Int64(bytes.count)
        if kind == .append, buffer.count >= store.options.pieceSize { try putPiece() }
    }

    func durable() throws(ReceiverError) {
        guard open else { throw ReceiverError(.storageFailed, "the blob was closed") }
        if kind == .append, !buffer.isEmpty { try putPiece() }
    }

    func commit() throws(ReceiverError) {
        guard open else { throw ReceiverError(.storageFailed, "the blob was closed") }
        if !buffer.isEmpty || put.isEmpty { try putPiece() }
        open = false
    }

    func discard() {
        guard open else { return }
        open = false
        buffer = []
        deletePut()
    }

    func abandon() {
        open = false
        buffer = []
        put = []
    }

    func retract() {
        open = false
        buffer = []
        deletePut()
    }

    private func deletePut() {
        let client = store.client
        let names = put
        put = []
        guard !names.isEmpty else { return }
        _ = try? S3BlobStore.s3 { () async throws(TransportError) in
            try await S3BlobStore.deleteAll(names, client: client)
        }
    }

    private func putPiece() throws(ReceiverError) {
        let client = store.client
        let bytes = buffer
        let name =
            store.pieceFolder(upload)
            + S3BlobPiece.name(
                start: start + flushed, length: Int64(bytes.count), kind: kind, time: time + UInt64(put.count),
                nonce: nonce)
        try S3BlobStore.s3 { () async throws(TransportError) in try await client.putObject(name, bytes: bytes) }
        if kind == .region {
            store.remember(
                S3BlobPiece(own: name, start: start + flushed, length: Int64(bytes.count), kind: kind), of: upload)
        }
        put.append(name)
        flushed += Int64(bytes.count)
        buffer.removeAll(keepingCapacity: true)
    }
}
