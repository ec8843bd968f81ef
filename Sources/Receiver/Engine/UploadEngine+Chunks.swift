import AetherCoding
import AetherIO
import AetherIntegrity

extension UploadEngine {
    /// Opens chunk `index` of the native upload `id`. An index out of range is `.malformedRequest`; a length other
    /// than the layout's is `.lengthMismatch`; an index stored with another SHA-256 is `.duplicateChunk` (nothing
    /// changes). An index stored with the same SHA-256 gives a sink that checks the bytes and stores nothing.
    ///
    /// With `from` (a continuation, `docs/PROTOCOL.md` 3.2.2: the sink takes the chunk's bytes from `from` on), the
    /// receiver must hold a partial of the chunk with exactly `from` bytes of the same bytes (length, SHA-256, CRC32C;
    /// the link may differ, as it travels with a run's last chunk only): the sink then
    /// continues it (its writer placed after the prefix, its hash states resumed) and checks the whole chunk at the
    /// end. Otherwise `.partialMismatch` with `offset` the bytes it holds (0: none, or a partial of other bytes), the
    /// partial kept. A chunk stored since with the same SHA-256 takes the rest and drops it. A request without `from`
    /// drops the chunk's partial: it writes the chunk whole.
    public func openChunk(
        _ id: UploadID, index: Int, descriptor: ChunkDescriptor, owner: ClientIdentity, from: Int? = nil
    ) throws(ReceiverError) -> ChunkSink {
        if let from, from <= 0 || from >= descriptor.length {
            throw ReceiverError(
                .malformedRequest, "a continuation starts inside its chunk, not at byte \(from)", chunk: index)
        }
        let record = try loadNative(id, owner: owner)
        if record.size == nil {
            try checkDeferredChunk(record, index: index, length: descriptor.length)
        } else {
            guard index >= 0, index < record.chunks else {
                throw ReceiverError(
                    .malformedRequest, "chunk index \(index) is outside 0..<\(record.chunks)", chunk: index)
            }
        }
        let expected = record.size == nil ? descriptor.length : Self.chunkLength(index: index, record: record)
        guard descriptor.length == expected else {
            throw ReceiverError(
                .lengthMismatch, "chunk \(index) is \(expected) bytes, \(descriptor.length) were declared",
                chunk: index)
        }
        // The upload is being written into from here on: no expiry removes it under this request.
        let lease = try writerLease(id)
        // The chunk is written in place into the upload's stream file, so one request at a time owns its region;
        // the receipt is read after the claim (a request that held it before committed its receipt first).
        guard let claim = claimRegion(id, index: index, takeOverAfter: limits.chunkClaimWaitSeconds) else {
            lease.end()
            throw ReceiverError(
                .unavailable, "chunk \(index) is being received on another request; retry", chunk: index)
        }
        do throws(ReceiverError) {
            if let stored = try catalog.chunkReceipt(id, index: index) {
                claim.release()
                lease.end()
                guard stored.sha256 == descriptor.sha256 else {
                    throw ReceiverError(.duplicateChunk, "chunk \(index) is stored with other bytes", chunk: index)
                }
                dropPartial(id, index: index)
                return ChunkSink(
                    engine: self, id: id, target: .chunk(index: index), descriptor: descriptor, writer: nil, from: from)
            }
            let offset = Self.chunkOffset(index: index, record: record)
            guard let from else {
                dropPartial(id, index: index)
                let writer = try blobs.place(into: .stream(id), at: offset)
                return ChunkSink(
                    engine: self, id: id, target: .chunk(index: index), descriptor: descriptor, writer: writer,
                    claim: claim, lease: lease)
            }
            // Under the claim, the partial is this request's to continue: a takeover just now handed its own over.
            // The same bytes are the same length, SHA-256 and CRC32C; the link travels only with a run's last chunk.
            let held = heldPartial(id, index: index).flatMap { Self.sameBytes($0.descriptor, descriptor) ? $0 : nil }
            guard keepsCutPrefixes, let held, held.received == from, let partial = takePartial(id, index: index)
            else {
                let received = held?.received ?? 0
                throw ReceiverError(
                    .partialMismatch,
                    "chunk \(index): the receiver holds \(received) bytes of it, the continuation starts at \(from)",
                    chunk: index, offset: Int64(received))
            }
            let writer: any BlobWriter
            do throws(ReceiverError) {
                writer = try blobs.place(into: .stream(id), at: offset, keeping: Int64(from))
            } catch {
                keepPartial(partial, id: id, index: index)
                throw error
            }
            return ChunkSink(
                engine: self, id: id, target: .chunk(index: index), descriptor: descriptor, writer: writer,
                claim: claim, lease: lease, resumed: partial)
        } catch {
            claim.release()
            lease.end()
            throw error
        }
    }

    /// Whether two descriptors describe the same bytes (the link aside: a run carries only its last chunk's).
    static func sameBytes(_ one: ChunkDescriptor, _ other: ChunkDescriptor) -> Bool {
        one.length == other.length && one.sha256 == other.sha256 && one.crc32c == other.crc32c
    }

    /// Registers a request writing into the open upload `id` (`beginWriting`), then checks that the upload is still
    /// open: an expiry or a cancel that ran before the registration is seen here, one after it waits for it.
    func writerLease(_ id: UploadID) throws(ReceiverError) -> WriterLease {
        guard let lease = beginWriting(id) else { throw ReceiverError(.expired, "the upload expired") }
        guard let record = try catalog.record(id) else {
            lease.withdraw()
            throw ReceiverError(.notFound, "no upload has this id")
        }
        guard record.state == .open else {
            lease.withdraw()
            throw Self.stateError(record)
        }
        return lease
    }

    /// Opens parity shard `shard` of group `group` (every shard is `chunkSize` bytes).
    public func openParity(
        _ id: UploadID, group: Int, shard: Int, descriptor: ChunkDescriptor, owner: ClientIdentity
    ) throws(ReceiverError) -> ChunkSink {
        let record = try loadNative(id, owner: owner)
        guard let parity = record.parity else {
            throw ReceiverError(.malformedRequest, "the upload was created without parity")
        }
        let groups = parity.groupCount(chunks: record.chunks)
        guard group >= 0, group < groups, shard >= 0, shard < parity.parity else {
            throw ReceiverError(.malformedRequest, "parity shard \(group).\(shard) is outside the layout")
        }
        guard descriptor.length == record.chunkSize else {
            throw ReceiverError(.lengthMismatch, "a parity shard is \(record.chunkSize) bytes")
        }
        let position = group * parity.parity + shard
        if let stored = try catalog.parityReceipts(id).first(where: { $0.index == position }) {
            guard stored.sha256 == descriptor.sha256 else {
                throw ReceiverError(.duplicateChunk, "parity shard \(group).\(shard) is stored with other bytes")
            }
            return ChunkSink(
                engine: self, id: id, target: .parity(group: group, shard: shard), descriptor: descriptor, writer: nil)
        }
        let lease = try writerLease(id)
        let writer: any BlobWriter
        do throws(ReceiverError) {
            writer = try blobs.stage(.parity(id, group: group, shard: shard))
        } catch {
            lease.end()
            throw error
        }
        return ChunkSink(
            engine: self, id: id, target: .parity(group: group, shard: shard), descriptor: descriptor, writer: writer,
            lease: lease)
    }

    private func loadNative(_ id: UploadID, owner: ClientIdentity) throws(ReceiverError) -> UploadRecord {
        let record = try load(id, owner: owner, allowing: [.open])
        guard record.uploadProtocol == .native else {
            throw ReceiverError(.malformedRequest, "a byte-stream upload takes appends, not chunks")
        }
        if try expireIfIdle(record) { throw ReceiverError(.expired, "the upload expired") }
        return record
    }

    static func chunkLength(index: Int, record: UploadRecord) -> Int {
        let size = record.size ?? 0
        guard index == record.chunks - 1 else { return record.chunkSize }
        return Int(size - Int64(record.chunkSize) * Int64(record.chunks - 1))
    }

    /// Commits a verified, durable chunk: under the upload's gate, a concurrent request for the same index that
    /// won decides the outcome; otherwise the blob is made visible and the receipt committed, then the chain is
    /// checked and parity rebuilds run.
    func commitChunk(_ id: UploadID, index: Int, receipt: ChunkReceipt, writer: any BlobWriter)
        throws(ReceiverError) -> ChunkOutcome
    {
        var receipt = receipt
        receipt.index = index
        var committed: UploadRecord?
        let outcome = try withGate(id) { () throws(ReceiverError) -> ChunkOutcome in
            guard var record = try catalog.record(id), record.state == .open else {
                writer.discard()
                let current = try catalog.record(id)
                throw current.map { Self.stateError($0) } ?? ReceiverError(.notFound, "no upload has this id")
            }
            if let stored = try catalog.chunkReceipt(id, index: index) {
                writer.discard()
                guard stored.sha256 == receipt.sha256 else {
                    throw ReceiverError(.duplicateChunk, "chunk \(index) is stored with other bytes", chunk: index)
                }
                return .alreadyStored
            }
            do throws(ReceiverError) {
                try writer.commit()
            } catch {
                writer.discard()
                throw error
            }
            record.updatedAt = now
            let broken = try advanceChain(&record, adding: [receipt])
            // Not recorded: the region's bytes stay unread until a later request writes them again.
            try catalog.recordChunks([receipt], upload: record)
            dropPartial(id, index: index)
            if let broken {
                // The upload failed: it takes no continuation, so its prefixes would only hold places in the table.
                dropPartials(id)
                throw ReceiverError(.chainBroken, "the commitment link of chunk \(broken) differs", chunk: broken)
            }
            try rebuildFromParity(&record, groups: record.parity.map { [index / $0.data] } ?? [])
            committed = record
            return .stored
        }
        // Outside the gate: reading the prefix back (GETs on a fleet's S3 store) must not hold up the commits of the
        // upload's other chunks.
        if let committed { advanceWholeHash(committed) }
        return outcome
    }

    /// Commits a verified, durable parity shard, then rebuilds the group's missing chunks when it can.
    func commitParity(_ id: UploadID, group: Int, shard: Int, receipt: ChunkReceipt, writer: any BlobWriter)
        throws(ReceiverError) -> ChunkOutcome
    {
        var committed: UploadRecord?
        let outcome = try withGate(id) { () throws(ReceiverError) -> ChunkOutcome in
            guard var record = try catalog.record(id), record.state == .open, let parity = record.parity else {
                writer.discard()
                throw ReceiverError(.expired, "the upload is no longer open")
            }
            var receipt = receipt
            receipt.index = group * parity.parity + shard
            if let stored = try catalog.parityReceipts(id).first(where: { $0.index == receipt.index }) {
                writer.discard()
                guard stored.sha256 == receipt.sha256 else {
                    throw ReceiverError(.duplicateChunk, "parity shard \(group).\(shard) is stored with other bytes")
                }
                return .alreadyStored
            }
            do throws(ReceiverError) {
                try writer.commit()
            } catch {
                writer.discard()
                throw error
            }
            record.updatedAt = now
            do throws(ReceiverError) {
                try catalog.recordParity(receipt, upload: record)
            } catch {
                try? blobs.delete(.parity(id, group: group, shard: shard))
                throw error
            }
            try rebuildFromParity(&record, groups: [group])
            committed = record
            return .stored
        }
        if let committed { advanceWholeHash(committed) }
        return outcome
    }

    /// Checks commitment links as the stored prefix grows (gate held): from the last checked link, each next
    /// stored chunk's link is recomputed from its hash; a link the client sent that differs marks the upload
    /// failed. Returns the broken index, if any. `record` is updated (not yet saved).
    func advanceChain(_ record: inout UploadRecord, adding: [ChunkReceipt]) throws(ReceiverError) -> Int? {
        guard record.state == .open, var link = record.chainLink else { return nil }
        let added = Dictionary(adding.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        var next = record.chainVerifiedThrough + 1
        while next < chainBound(record) {
            let receipt: ChunkReceipt
            if let known = added[next] {
                receipt = known
            } else if let stored = try catalog.chunkReceipt(record.id, index: next) {
                receipt = stored
            } else {
                break
            }
            let computed = ChunkCommitmentChain.link(chunkHash: receipt.sha256, previous: link)
            if let sent = receipt.link, sent != computed {
                record.state = .failed
                record.failure = "\(ReceiverError.Code.chainBroken.name): the link of chunk \(next) differs"
                return next
            }
            link = computed
            record.chainVerifiedThrough = next
            record.chainLink = link
            next += 1
        }
        return nil
    }

    /// Rebuilds the missing data chunks of `groups` whose stored data and parity shards number at least `data`
    /// (gate held). The short last chunk and positions past the last chunk enter the code as zero-padded shards.
    func rebuildFromParity(_ record: inout UploadRecord, groups: [Int]) throws(ReceiverError) {
        guard let layout = record.parity, record.state == .open else { return }
        let parityReceipts = try catalog.parityReceipts(record.id)
        for group in groups {
            let parityPresent = (0..<layout.parity).map { shard in
                parityReceipts.contains { $0.index == group * layout.parity + shard }
            }
            guard parityPresent.contains(true) else { continue }
            let first = group * layout.data
            var dataPresent: [Bool] = []
            var missing: [Int] = []
            for position in 0..<layout.data {
                let index = first + position
                if index >= record.chunks {
                    dataPresent.append(true)
                } else if try catalog.chunkReceipt(record.id, index: index) != nil {
                    dataPresent.append(true)
                } else {
                    dataPresent.append(false)
                    missing.append(index)
                }
            }
            guard !missing.isEmpty, dataPresent.count(where: { $0 }) + parityPresent.count(where: { $0 }) >= layout.data
            else {
                continue
            }
            let rebuilt = try rebuildGroup(
                record, group: group, layout: layout, dataPresent: dataPresent, parityPresent: parityPresent)
            var receipts: [ChunkReceipt] = []
            // A chunk being received on a request right now is left to it (its region is that request's).
            var claims: [ChunkClaim] = []
            defer { for claim in claims { claim.release() } }
            for index in missing {
                guard let claim = claimRegion(record.id, index: index) else { continue }
                claims.append(claim)
                // The region is rewritten: a received prefix kept of it no longer describes its bytes (a failed
                // rebuild zeroes them), so it goes before the first byte, under the claim a continuation also needs.
                dropPartial(record.id, index: index)
                let bytes = rebuilt[index - first]
                let length = Self.chunkLength(index: index, record: record)
                let chunk = Array(bytes.prefix(length))
                let writer = try blobs.place(
                    into: .stream(record.id), at: Self.chunkOffset(index: index, record: record))
                try claim.whileCurrent { () throws(ReceiverError) in
                    do throws(ReceiverError) {
                        try unsafe ByteBuffers.withRaw(chunk) { raw throws(ReceiverError) in
                            try unsafe writer.write(raw)
                        }
                        try writer.commit()
                    } catch {
                        writer.discard()
                        throw error
                    }
                }
                receipts.append(
                    ChunkReceipt(
                        index: index, length: length, sha256: SHA256.hash(chunk), crc32c: CRC32C.checksum(chunk),
                        link: nil, rebuilt: true))
            }
            guard !receipts.isEmpty else { continue }
            record.updatedAt = now
            let broken = try advanceChain(&record, adding: receipts)
            try catalog.recordChunks(receipts, upload: record)
            // A rebuilt chunk's region holds its bytes whole now: a received prefix of it is gone.
            for receipt in receipts { dropPartial(record.id, index: receipt.index) }
            if let broken {
                dropPartials(record.id)
                throw ReceiverError(.chainBroken, "the commitment link of chunk \(broken) differs", chunk: broken)
            }
        }
    }

    private func rebuildGroup(
        _ record: UploadRecord, group: Int, layout: ParityLayout, dataPresent: [Bool], parityPresent: [Bool]
    ) throws(ReceiverError) -> [[UInt8]] {
        let first = group * layout.data
        var shards: [[UInt8]?] = []
        for (position, present) in dataPresent.enumerated() {
            let index = first + position
            if !present {
                shards.append(nil)
            } else if index >= record.chunks {
                shards.append([UInt8](repeating: 0, count: record.chunkSize))
            } else {
                var bytes = try readChunk(record, index: index)
                if bytes.count < record.chunkSize {
                    bytes += [UInt8](repeating: 0, count: record.chunkSize - bytes.count)
                }
                shards.append(bytes)
            }
        }
        for (shard, present) in parityPresent.enumerated() {
            shards.append(
                present
                    ? try blobs.readAll(
                        .parity(record.id, group: group, shard: shard), expectedLength: record.chunkSize)
                    : nil)
        }
        do {
            let code = try ReedSolomonCode(dataShards: layout.data, parityShards: layout.parity, field: .gf256)
            return try code.decode(shards)
        } catch {
            throw ReceiverError(.storageFailed, "the parity rebuild failed: \(error.message)")
        }
    }
}
