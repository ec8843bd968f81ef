import AetherIO
import AetherIntegrity
import Synchronization

extension UploadEngine {
    /// Opens an append to the byte stream of `id` at `offset` (the brief form of `openAppend(_:request:owner:)`).
    public func openAppend(
        _ id: UploadID, offset: Int64, owner: ClientIdentity, length: Int64? = nil, completes: Bool? = nil,
        digest: AppendRequest.Digest? = nil
    ) throws(ReceiverError) -> AppendSink {
        try openAppend(
            id, request: AppendRequest(offset: offset, length: length, completes: completes, digest: digest),
            owner: owner)
    }

    /// Opens an append to the byte stream of `id`. The offset must be the stored one (`.offsetMismatch` carries
    /// it). One append runs at a time per upload: while another one holds the stream, this one waits up to
    /// `limits.chunkClaimWaitSeconds`, then takes the stream over (the older request's connection froze or died
    /// unseen; it can write and commit nothing more, and what it received but did not commit is dropped). The
    /// offset is checked again once the stream is held: an older append that committed meanwhile moved it.
    public func openAppend(_ id: UploadID, request: AppendRequest, owner: ClientIdentity) throws(ReceiverError)
        -> AppendSink
    {
        let record = try load(id, owner: owner, allowing: [.open, .complete])
        guard record.uploadProtocol.isByteStream else {
            throw ReceiverError(.malformedRequest, "a native upload takes chunks, not appends")
        }
        if case .final = record.concatenation {
            throw ReceiverError(.forbidden, "a final concatenated upload takes no appends")
        }
        if record.state == .complete { return try completedAppend(record, request: request) }
        if try expireIfIdle(record) { throw ReceiverError(.expired, "the upload expired") }
        // Refused at once when wrong before anything is waited for; checked again on the state found once held.
        _ = try checkedAppend(record, request: request)
        // Registered as a writer before the state is read again below, so no expiry removes the upload meanwhile.
        guard let lease = beginWriting(id) else { throw ReceiverError(.expired, "the upload expired") }
        guard let claim = claimRegion(id, index: nil, takeOverAfter: limits.chunkClaimWaitSeconds) else {
            lease.end()
            throw ReceiverError(.unavailable, "another append to this upload is in progress; retry")
        }
        do throws(ReceiverError) {
            let current = try load(id, owner: owner, allowing: [.open, .complete])
            if current.state == .complete {
                claim.release()
                lease.end()
                return try completedAppend(current, request: request)
            }
            let (checked, limit) = try checkedAppend(current, request: request)
            if checked.size != current.size {
                try withGate(id) { () throws(ReceiverError) in
                    guard var stored = try catalog.record(id), stored.state == .open else {
                        throw ReceiverError(.expired, "the upload ended")
                    }
                    stored.size = checked.size
                    stored.updatedAt = now
                    try catalog.update(stored, event: "size \(stored.size ?? -1)")
                }
            }
            let writer = try blobs.append(to: .stream(id), at: checked.offset)
            return AppendSink(
                engine: self, id: id, request: request, limit: limit, writer: writer, claim: claim, lease: lease)
        } catch {
            claim.release()
            lease.end()
            throw error
        }
    }

    /// A request at a complete upload: a retried completing request takes nothing and answers the completed state.
    private func completedAppend(_ record: UploadRecord, request: AppendRequest) throws(ReceiverError) -> AppendSink {
        guard request.offset == record.offset, request.length ?? 0 == 0 else {
            throw ReceiverError(.offsetMismatch, "the upload is complete", offset: record.offset)
        }
        return AppendSink(engine: self, id: record.id, request: request, limit: 0, writer: nil)
    }

    /// Checks `request` against the open upload `record`: the offset is the stored one, the lengths fit the size.
    /// Returns the record with the size the request declares, and how many bytes the append may take.
    private func checkedAppend(_ record: UploadRecord, request: AppendRequest) throws(ReceiverError) -> (
        UploadRecord, limit: Int64
    ) {
        var record = record
        guard request.offset == record.offset else {
            throw ReceiverError(
                .offsetMismatch, "the append is at \(request.offset), the upload holds \(record.offset) bytes",
                offset: record.offset)
        }
        if let length = request.length, length < 0 {
            throw ReceiverError(.malformedRequest, "the declared length is negative")
        }
        if let declared = request.uploadLength {
            guard declared >= record.offset, declared <= limits.maximumObjectSize else {
                throw ReceiverError(.tooLarge, "the declared size is out of range")
            }
            if let size = record.size, size != declared {
                throw ReceiverError(.malformedRequest, "the declared size differs from the upload's size")
            }
            record.size = declared
        }
        if let size = record.size, let length = request.length, record.offset + length > size {
            throw ReceiverError(.tooLarge, "the append goes past the upload's size")
        }
        if request.completes == true, let size = record.size, let length = request.length,
            record.offset + length != size
        {
            throw ReceiverError(.lengthMismatch, "the completing append does not end at the upload's size")
        }
        let limit = record.size.map { $0 - record.offset } ?? (limits.maximumObjectSize - record.offset)
        return (record, limit)
    }

    /// Makes an ended append durable and records it; completes the stream when it reached its size.
    func commitAppend(_ id: UploadID, request: AppendRequest, taken: TakenAppend, completing: Bool)
        throws(ReceiverError) -> AppendResult
    {
        guard let writer = taken.writer else {
            // A retried completing request on a complete upload.
            let record = try catalog.record(id)
            return AppendResult(
                offset: record?.offset ?? request.offset, completed: true, receipt: try catalog.receipt(id))
        }
        do throws(ReceiverError) {
            try writer.commit()
        } catch {
            writer.discard()
            throw error
        }
        return try withGate(id) { () throws(ReceiverError) -> AppendResult in
            guard var record = try catalog.record(id) else { throw ReceiverError(.notFound, "no upload has this id") }
            if record.state == .complete, record.offset != request.offset {
                // Another receiver of a fleet completed it first.
                writer.retract()
                throw ReceiverError(.offsetMismatch, "the upload was completed meanwhile", offset: record.offset)
            }
            guard record.state == .open else { throw ReceiverError(.expired, "the upload ended while the append ran") }
            // Another receiver of a fleet took this offset first: its bytes are the acknowledged ones.
            guard record.offset == request.offset else {
                writer.retract()
                throw ReceiverError(
                    .offsetMismatch, "another append took offset \(request.offset) first", offset: record.offset)
            }
            record.offset = request.offset + taken.written
            record.updatedAt = now
            if let objectSHA256 = request.objectSHA256 { record.expectedSHA256 = objectSHA256 }
            if completing, request.completes == true, record.size == nil { record.size = record.offset }
            let reachesEnd = record.size == record.offset
            guard completing, reachesEnd, request.completes != false else {
                try catalog.update(record, event: "append \(taken.written)")
                return AppendResult(offset: record.offset, completed: false, receipt: nil)
            }
            try catalog.update(record, event: "append \(taken.written)")
            let running = request.offset == 0 ? taken.sha256?.finalize() : nil
            let done = try completeStream(record, runningDigest: running)
            return AppendResult(offset: done.record.offset, completed: true, receipt: done.receipt)
        }
    }

    /// Completes a byte stream that holds all its bytes (call with the upload's gate held): checks the whole
    /// SHA-256 against the expected one, makes the object visible atomically, records the receipt.
    func completeStream(_ record: UploadRecord, runningDigest: Digest32?) throws(ReceiverError) -> (
        record: UploadRecord, receipt: UploadReceiptRecord
    ) {
        var record = record
        let size = record.size ?? record.offset
        let fileSHA256: Digest32
        if let runningDigest {
            fileSHA256 = runningDigest
        } else {
            fileSHA256 = try digest(of: .stream(record.id), size: size)
        }
        if let expected = record.expectedSHA256, expected != fileSHA256 {
            record.state = .failed
            record.failure = "\(ReceiverError.Code.digestMismatch.name): the whole object's SHA-256 differs"
            record.updatedAt = now
            try catalog.update(record, event: "failed: digest mismatch")
            try blobs.deleteWorkingBlobs(of: record.id)
            throw ReceiverError(.digestMismatch, "the object's SHA-256 is not the expected one")
        }
        if size == 0, try blobs.size(of: .stream(record.id)) == nil {
            try blobs.append(to: .stream(record.id), at: 0).commit()
        }
        try blobs.promote(.stream(record.id), to: .object(record.id))
        return try recordCompletion(
            record, fileSHA256: fileSHA256, chainHead: .zero, merkleRoot: .zero, chunks: 0, size: size)
    }

    /// Records a completed upload (the object is already visible) and enters it in the dedup index. When the
    /// catalogue refuses, the object is renamed back to the stream (`returnsToStream`, default: a byte-stream
    /// upload; a native upload completed from its chunks passes true) or deleted.
    func recordCompletion(
        _ record: UploadRecord, fileSHA256: Digest32, chainHead: Digest32, merkleRoot: Digest32, chunks: Int,
        size: Int64, indexObject: Bool = true, returnsToStream: Bool? = nil
    ) throws(ReceiverError) -> (record: UploadRecord, receipt: UploadReceiptRecord) {
        var record = record
        let completedAt = now
        record.state = .complete
        record.size = size
        record.offset = size
        record.updatedAt = completedAt
        let receipt = UploadReceiptRecord(
            chainHead: chainHead, chunks: chunks, cid: CIDv1(digest: fileSHA256).string, completedAt: completedAt,
            fileSHA256: fileSHA256, id: record.id, merkleRoot: merkleRoot, size: size)
        // A native upload's chunk receipts stay in the catalogue: they are the object's digests at its chunk size.
        let object = StoredObject(
            contentID: ACI(digest: fileSHA256).description, owner: record.owner,
            chunkSize: record.uploadProtocol == .native ? record.chunkSize : 0, upload: record.id, size: size,
            fileSHA256: fileSHA256)
        do throws(ReceiverError) {
            try catalog.recordCompletion(record, receipt: receipt, object: indexObject ? object : nil)
        } catch {
            // Not recorded: the object must not stay visible; its bytes return to the stream they came from.
            if returnsToStream ?? record.uploadProtocol.isByteStream {
                try? blobs.promote(.object(record.id), to: .stream(record.id))
            } else {
                try? blobs.delete(.object(record.id))
            }
            throw error
        }
        try? blobs.deleteWorkingBlobs(of: record.id)
        state.withLock { _ = $0.possession.removeValue(forKey: record.id) }
        dropWholeHash(record.id)
        forgetActivity(record.id)
        return (record, receipt)
    }

    /// SHA-256 of the first `size` bytes of `key`, read back from storage.
    func digest(of key: BlobKey, size: Int64) throws(ReceiverError) -> Digest32 {
        var hash = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { unsafe buffer.deallocate() }
        var offset: Int64 = 0
        while offset < size {
            let want = Int(min(Int64(buffer.count), size - offset))
            let count = try unsafe blobs.read(
                key, at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
            guard count == want else { throw ReceiverError(.storageFailed, "\(key) is shorter than recorded") }
            unsafe hash.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
        }
        return hash.finalize()
    }
}
