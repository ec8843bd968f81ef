import AetherIO
public import AetherIntegrity
import AetherSecurity

extension UploadEngine {
    /// Completes the native upload `id`: every chunk must be stored or rebuilt (else `.incomplete` naming the first
    /// missing one); the chain head and Merkle root are recomputed from the stored chunk hashes and the whole
    /// SHA-256 from the stream file the chunks were written into, which is then renamed into place; all three must equal the client's claim, otherwise the
    /// upload stays open (`.chainBroken`, `.merkleMismatch` naming the first differing chunk when hashes were sent,
    /// `.digestMismatch`) and no object is visible. Idempotent: a complete upload returns its receipt.
    public func complete(_ id: UploadID, owner: ClientIdentity, claim: CompletionClaim) throws(ReceiverError)
        -> UploadReceiptRecord
    {
        _ = try load(id, owner: owner, allowing: [.open, .complete])
        return try withGate(id) { () throws(ReceiverError) -> UploadReceiptRecord in
            var record = try load(id, owner: owner, allowing: [.open, .complete])
            if record.state == .complete {
                guard let receipt = try catalog.receipt(id) else {
                    throw ReceiverError(.storageFailed, "a complete upload has no receipt")
                }
                return receipt
            }
            guard record.uploadProtocol == .native else {
                throw ReceiverError(.malformedRequest, "a byte-stream upload completes with its last append")
            }
            let receipts = try catalog.chunkReceipts(id)
            record = try settledSize(record, claimed: claim.size, receipts: receipts)
            var hashes = [Digest32?](repeating: nil, count: record.chunks)
            for receipt in receipts where receipt.index < record.chunks { hashes[receipt.index] = receipt.sha256 }
            if let missing = hashes.firstIndex(where: { $0 == nil }) {
                throw ReceiverError(
                    .incomplete, "\(hashes.count { $0 == nil }) chunks are missing, the first is \(missing)",
                    chunk: missing)
            }
            let stored = hashes.compactMap { $0 }
            let (root, head) = try Self.rootAndHead(stored, session: record.chainSessionID ?? "")
            if head != claim.chainHead {
                let first = Self.firstBrokenLink(receipts, session: record.chainSessionID ?? "")
                throw ReceiverError(
                    .chainBroken, "the chain head recomputed from stored chunks differs from the claim", chunk: first)
            }
            if root != claim.merkleRoot {
                let first = claim.chunkHashes.flatMap { sent in
                    stored.indices.first { $0 >= sent.count || sent[$0] != stored[$0] }
                }
                throw ReceiverError(
                    .merkleMismatch, "the Merkle root recomputed from stored chunks differs from the claim",
                    chunk: first)
            }
            // The chunks were written in place into the stream file, each fsync'ed before its receipt: the object
            // is that file (hashed as its prefix grew, the rest now) renamed into place, never copied.
            let size = record.size ?? 0
            if size == 0, try blobs.size(of: .stream(id)) == nil {
                try blobs.place(into: .stream(id), at: 0).commit()
            }
            guard try blobs.size(of: .stream(id)) == size else {
                throw ReceiverError(.storageFailed, "the stored chunks do not add up to \(size) bytes")
            }
            let fileSHA256 = try wholeSHA256(record, size: size)
            let expected = record.contentID.flatMap { try? ACI(parsing: $0).digest }
            guard fileSHA256 == claim.fileSHA256, expected == nil || expected == fileSHA256 else {
                throw ReceiverError(.digestMismatch, "the whole object's SHA-256 differs from the claim")
            }
            try blobs.promote(.stream(id), to: .object(id))
            return try recordCompletion(
                record, fileSHA256: fileSHA256, chainHead: head, merkleRoot: root, chunks: record.chunks, size: size,
                returnsToStream: true
            ).receipt
        }
    }

    /// The stored object of the complete upload `id`, `size` bytes, read whole (a capture manifest, bounded by the
    /// caller).
    func objectBytes(_ id: UploadID, size: Int64) throws(ReceiverError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let read = try unsafe ByteBuffers.withMutableRaw(&bytes) { raw throws(ReceiverError) in
            try unsafe blobs.read(.object(id), at: 0, into: raw)
        }
        guard read == bytes.count else {
            throw ReceiverError(.storageFailed, "the stored object is shorter than recorded")
        }
        return bytes
    }

    static func rootAndHead(_ hashes: [Digest32], session: String) throws(ReceiverError) -> (Digest32, Digest32) {
        var tree = StreamingMerkleTree()
        var link = ChunkCommitmentChain.genesis(sessionID: session)
        for hash in hashes {
            do {
                _ = try tree.append(hash)
            } catch {
                throw ReceiverError(.tooLarge, "too many chunks for a Merkle tree")
            }
            link = ChunkCommitmentChain.link(chunkHash: hash, previous: link)
        }
        return (tree.root, link)
    }

    private static func firstBrokenLink(_ receipts: [ChunkReceipt], session: String) -> Int? {
        var link = ChunkCommitmentChain.genesis(sessionID: session)
        for receipt in receipts {
            link = ChunkCommitmentChain.link(chunkHash: receipt.sha256, previous: link)
            if let sent = receipt.link, sent != link { return receipt.index }
        }
        return nil
    }

    // MARK: Byzantine spot checks

    /// Answers a spot check of version 2 (`docs/PROTOCOL.md` 3.6): for each range of a stored chunk, the MAC of
    /// `ByzantineChallenge` keyed by `nonce` over the range's bytes read from storage (the chunk's region of the
    /// upload's stream, or of its object once complete), the chunk's recorded SHA-256, and once every chunk's hash is
    /// recorded its inclusion proof in the tree over them. Ranges of unstored chunks answer with nothing.
    ///
    /// What one request reads is bounded: the ranges may add up to `limits.maximumChallengeBytes` (more is
    /// `.challengeTooLarge`, before anything is read), and proofs come from the recorded hashes, which the catalogue
    /// keeps after completion, so no chunk outside the ranges is ever read. 1 to 64 distinct indices, each range
    /// within its chunk, a 32-byte nonce, and an upload of known size; otherwise `.malformedRequest`.
    public func challenge(
        _ id: UploadID, items: [ByzantineChallenge.Item], nonce: [UInt8], owner: ClientIdentity
    ) throws(ReceiverError) -> [ChallengeAnswer] {
        let record = try load(id, owner: owner, allowing: [.open, .complete])
        guard record.uploadProtocol == .native else {
            throw ReceiverError(.malformedRequest, "only native uploads answer challenges")
        }
        guard record.size != nil else {
            // The chunk count and the last chunk's length are unknown until the completion fixes the size.
            throw ReceiverError(.malformedRequest, "an upload of unknown size answers no challenges")
        }
        guard !items.isEmpty, items.count <= 64 else {
            throw ReceiverError(.malformedRequest, "a challenge asks 1 to 64 indices")
        }
        let challenge: ByzantineChallenge
        do {
            challenge = try ByzantineChallenge(uploadID: Array(id.rawValue.utf8), items: items, nonce: nonce)
        } catch {
            throw ReceiverError(.malformedRequest, "a challenge names each chunk once, with a 32-byte nonce")
        }
        for item in items {
            guard item.index < record.chunks else {
                throw ReceiverError(
                    .malformedRequest, "chunk index \(item.index) is outside the upload", chunk: item.index)
            }
            guard item.offset + item.length <= Int64(Self.chunkLength(index: item.index, record: record)) else {
                throw ReceiverError(
                    .malformedRequest, "the range of chunk \(item.index) ends past the chunk", chunk: item.index)
            }
        }
        let total = items.reduce(Int64(0)) { $0 + $1.length }
        guard total <= limits.maximumChallengeBytes else {
            throw ReceiverError(
                .challengeTooLarge,
                "the ranges add up to \(total) bytes, more than the \(limits.maximumChallengeBytes) one challenge reads"
            )
        }
        let complete = record.state == .complete
        // A complete upload's object lost or cut at rest (a disk's fault, an operator's rm) holds nothing to prove:
        // answered as an upload no longer held, not as a lack of room.
        if complete, try blobs.size(of: .object(id)) != record.size {
            throw ReceiverError(.notFound, "the stored object is missing or not of its recorded size (lost at rest)")
        }
        var hashes = [Digest32?](repeating: nil, count: record.chunks)
        for receipt in try catalog.chunkReceipts(id) where receipt.index < record.chunks {
            hashes[receipt.index] = receipt.sha256
        }
        var answers: [ChallengeAnswer] = []
        for item in items {
            // An upload completed by proof of possession records no chunk hashes of its own, but holds every byte.
            guard complete || hashes[item.index] != nil else {
                answers.append(ChallengeAnswer(item: item, mac: nil, sha256: nil, proof: nil))
                continue
            }
            let start = Self.chunkOffset(index: item.index, record: record) + item.offset
            let mac = try macOfRange(
                complete ? .object(id) : .stream(id), offset: start, item: item, challenge: challenge)
            answers.append(ChallengeAnswer(item: item, mac: mac, sha256: hashes[item.index], proof: nil))
        }
        if !hashes.contains(where: { $0 == nil }) {
            do {
                let builder = try MerkleProofBuilder(chunkHashes: hashes.compactMap { $0 })
                for position in answers.indices where answers[position].sha256 != nil {
                    answers[position].proof = try builder.proof(forLeaf: answers[position].index)
                }
            } catch {
                throw ReceiverError(.storageFailed, "a Merkle proof could not be built")
            }
        }
        return answers
    }

    /// The MAC of `item` over the bytes `key` stores from `offset`, read in pieces of at most
    /// `challengeReadBytes`: a request holds that much, not its whole range (up to `maximumChallengeBytes`), so
    /// challenges on many connections at once cannot exhaust the receiver's memory.
    private func macOfRange(
        _ key: BlobKey, offset: Int64, item: ByzantineChallenge.Item, challenge: ByzantineChallenge
    ) throws(ReceiverError) -> Digest32 {
        var responder: ByzantineChallenge.Responder
        do { responder = try challenge.responder(for: item) } catch {
            throw ReceiverError(.storageFailed, "HMAC failed")
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: Int(max(1, min(item.length, Self.challengeReadBytes))), alignment: 64)
        defer { unsafe buffer.deallocate() }
        var done: Int64 = 0
        while done < item.length {
            let want = Int(min(Int64(buffer.count), item.length - done))
            let piece = unsafe UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want])
            let read = try unsafe blobs.read(key, at: offset + done, into: piece)
            guard read == want else {
                throw ReceiverError(.storageFailed, "the stored bytes are shorter than recorded")
            }
            do { try unsafe responder.update(UnsafeRawBufferPointer(piece)) } catch {
                throw ReceiverError(.storageFailed, "HMAC failed")
            }
            done += Int64(read)
        }
        do { return try responder.finalize() } catch { throw ReceiverError(.storageFailed, "HMAC failed") }
    }

    /// The most bytes one challenge request holds at once while it reads its ranges.
    static let challengeReadBytes: Int64 = 1 << 20

    // MARK: Concatenation (tus)

    /// Creates the final upload of tus concatenation from completed partial uploads of `owner`, in order, and
    /// assembles its object atomically.
    ///
    /// What one request may make the receiver write is bounded: each partial may be named once (a partial named
    /// twice is `.malformedRequest`), so a final writes the sum of distinct partials' sizes, bytes this client
    /// stored itself, and at most `limits.maximumObjectSize`. A partial may join several finals (tus allows it);
    /// each final is a copy of its own. A final that fails (the storage full, the catalogue refusing) is removed
    /// (recorded as expired, its bytes deleted), so it holds no open-upload slot; its partials are not changed.
    public func concatenate(final partials: [UploadID], owner: ClientIdentity, metadata: [String: [UInt8]] = [:])
        throws(ReceiverError) -> UploadRecord
    {
        guard !partials.isEmpty else { throw ReceiverError(.malformedRequest, "a final upload names its partials") }
        var size: Int64 = 0
        var named = Set<UploadID>()
        for partial in partials {
            guard named.insert(partial).inserted else {
                throw ReceiverError(.malformedRequest, "a final upload names partial \(partial) more than once")
            }
            let record = try load(partial, owner: owner, allowing: [.open, .complete])
            guard record.concatenation == .partial else {
                throw ReceiverError(.malformedRequest, "a final upload joins partial uploads only")
            }
            guard record.state == .complete, let partSize = record.size else {
                throw ReceiverError(.incomplete, "a partial upload is not complete")
            }
            size += partSize
        }
        guard size <= limits.maximumObjectSize else {
            throw ReceiverError(.tooLarge, "the joined size is over the limit")
        }
        let created = now
        let record = UploadRecord(
            id: UploadID(randomBytes: random(16)), owner: owner, uploadProtocol: .tus, state: .open, size: size,
            chunkSize: 0, chunks: 0, chainSessionID: nil, contentID: nil, parity: nil, metadata: metadata,
            expectedSHA256: nil, concatenation: .final(partials), offset: 0, chainVerifiedThrough: -1,
            chainLink: nil, createdAt: created, updatedAt: created)
        try catalog.insert(record)
        do throws(ReceiverError) {
            return try withGate(record.id) { () throws(ReceiverError) -> UploadRecord in
                var whole = SHA256()
                let writer = try unsafe blobs.assemble(.object(record.id), from: partials.map { .object($0) }) {
                    piece throws(ReceiverError) in unsafe whole.update(piece)
                }
                do throws(ReceiverError) {
                    try writer.commit()
                } catch {
                    writer.discard()
                    throw error
                }
                return try recordCompletion(
                    record, fileSHA256: whole.finalize(), chainHead: .zero, merkleRoot: .zero, chunks: 0, size: size,
                    returnsToStream: false
                ).record
            }
        } catch {
            removeFailedFinal(record, failure: error)
            throw error
        }
    }

    /// Removes a final upload whose assembly failed: recorded as expired (no open slot held), its bytes deleted.
    /// Best effort, since the failure being answered may be the storage's: a record left open expires as usual.
    private func removeFailedFinal(_ record: UploadRecord, failure: ReceiverError) {
        _ = try? withGate(record.id) { () throws(ReceiverError) in
            guard var stored = try catalog.record(record.id), stored.state == .open else { return }
            try? blobs.delete(.object(record.id))
            try? blobs.deleteWorkingBlobs(of: record.id)
            stored.state = .expired
            stored.failure = "concatenation failed: \(failure.code.name)"
            stored.updatedAt = now
            try catalog.recordRemoval(stored, event: "failed: concatenation")
        }
    }
}
