import AetherIO
import AetherIntegrity
import AetherSecurity
import Synchronization

extension UploadEngine {
    /// What a receiver's possession challenge asks: 32 ranges of 4 KiB at random offsets, nothing else. Checking an
    /// answer reads those 128 KiB of the stored object and no more (a full-content question would make a 70-byte
    /// answer read the whole object, a chunk question a whole chunk of up to 64 MiB).
    static let possessionPolicy = PossessionPolicy(
        includeFullHash: false, rangeCount: 32, rangeLength: 4096, merkleChunkCount: 0)

    /// The most bytes of a stored object one possession answer makes the receiver read.
    public static var possessionReadBound: Int { possessionPolicy.rangeCount * Int(possessionPolicy.rangeLength) }

    /// A fresh possession challenge (serialized) when `record`'s content id names a stored object of its size and
    /// chunk size that dedup may offer its owner; nil otherwise. Each call issues a new single-use challenge (15 s
    /// lifetime, AetherSecurity), kept in the catalogue with its key so that whichever receiver of a fleet the
    /// answer reaches can check it.
    func possessionChallenge(for record: UploadRecord) throws(ReceiverError) -> [UInt8]? {
        guard let entry = try possessionEntry(for: record) else { return nil }
        let shared: PossessionSharedChallenge
        do {
            shared = try entry.verifier.issueSharedChallenge()
        } catch {
            throw ReceiverError(.storageFailed, "a possession challenge could not be made")
        }
        let now = clock.wallMilliseconds()
        try catalog.recordPossessionChallenge(
            record.id, nonce: shared.challenge.nonce.bytes, challenge: shared.serialized, issuedAt: now,
            expiredBefore: now - Int64(ProofOfPossessionVerifier.challengeLifetime * 4000))
        return shared.challenge.serialized
    }

    /// The verifier of the stored object that dedup offers `record`: one with `record`'s content id, size and
    /// chunk size, stored by `record`'s owner (by anyone with `dedupAcrossClients`); nil when there is none, so an
    /// object held only by another client answers exactly as no object. Nothing of the object is read: the claim
    /// is the Merkle root its native upload's receipt kept.
    func possessionEntry(for record: UploadRecord) throws(ReceiverError) -> PossessionEntry? {
        guard record.uploadProtocol == .native, let contentID = record.contentID, let size = record.size,
            let object = try catalog.object(
                contentID: contentID, chunkSize: record.chunkSize,
                owner: limits.dedupAcrossClients ? nil : record.owner),
            object.size == size, try blobs.size(of: .object(object.upload)) == object.size,
            let receipt = try catalog.receipt(object.upload), receipt.chunks == record.chunks
        else { return nil }
        if let cached = state.withLock({ $0.possession[record.id] }), cached.object == object { return cached }
        let source = BlobPossessionSource(
            blobs: blobs, key: .object(object.upload), size: UInt64(object.size), readAhead: 0)
        let claim = PossessionClaim(
            contentSize: UInt64(size), chunkSize: UInt32(record.chunkSize), chunkCount: UInt64(record.chunks),
            merkleRoot: receipt.merkleRoot)
        let entry: PossessionEntry
        do {
            let verifier = try ProofOfPossessionVerifier(
                source: source, claim: claim, policy: Self.possessionPolicy, clock: clock)
            entry = PossessionEntry(verifier: verifier, object: object)
        } catch {
            throw ReceiverError(.storageFailed, "the stored object's digests do not describe it")
        }
        state.withLock { $0.possession[record.id] = entry }
        return entry
    }

    /// Checks a proof-of-possession response (`PossessionResponse.serialized`) against the challenge the catalogue
    /// keeps for its nonce (issued by this receiver or another of the fleet; taken out, so it answers once). A
    /// passed check completes the upload at once from the stored object (a second object entry with the same
    /// bytes, its chain head from the object's kept chunk hashes) and returns the receipt; a failed, replayed,
    /// expired or unknown one is `.possessionFailed` and the upload stays open. The check reads at most
    /// `possessionReadBound` bytes of the object.
    public func answerPossession(_ id: UploadID, response: [UInt8], owner: ClientIdentity) throws(ReceiverError)
        -> UploadReceiptRecord
    {
        _ = try load(id, owner: owner, allowing: [.open])
        let parsed: PossessionResponse
        do {
            parsed = try PossessionResponse(serialized: response)
        } catch {
            throw ReceiverError(.possessionFailed, "the possession proof failed or its challenge expired")
        }
        return try withGate(id) { () throws(ReceiverError) -> UploadReceiptRecord in
            let record = try load(id, owner: owner, allowing: [.open])
            guard let stored = try catalog.takePossessionChallenge(id, nonce: parsed.nonce.bytes),
                let shared = try? PossessionSharedChallenge(serialized: stored),
                let entry = try possessionEntry(for: record)
            else {
                throw ReceiverError(.possessionFailed, "no possession challenge is outstanding for this answer")
            }
            do {
                try entry.verifier.verify(parsed, shared: shared)
            } catch {
                throw ReceiverError(.possessionFailed, "the possession proof failed or its challenge expired")
            }
            return try completeFromHeld(record, entry: entry)
        }
    }

    /// Completes the open native upload `id`, whose every chunk is stored and verified as `sha256`'s bytes (a batched
    /// file, `docs/PROTOCOL.md` 3.10), from the object dedup offers it instead of keeping a second copy: only when
    /// that object's stored bytes, read back now, still hash to `sha256` (an object damaged at rest is never linked
    /// to: the new bytes are then kept as usual). The object is kept once under both uploads, and the upload's own
    /// staged bytes are dropped. Nil when no held object is offered, or it is another or damaged.
    func completeFromHeld(_ id: UploadID, owner: ClientIdentity, sha256: Digest32) throws(ReceiverError)
        -> UploadReceiptRecord?
    {
        try withGate(id) { () throws(ReceiverError) -> UploadReceiptRecord? in
            let record = try load(id, owner: owner, allowing: [.open])
            guard let entry = try possessionEntry(for: record), entry.object.fileSHA256 == sha256,
                (try? digest(of: .object(entry.object.upload), size: entry.object.size)) == sha256
            else { return nil }
            return try completeFromHeld(record, entry: entry)
        }
    }

    /// The completion of a proven upload (under its gate): its chain head is folded from the object's kept chunk
    /// hashes (32 bytes a chunk from the catalogue, never the object's bytes), the object aliased as the upload's.
    private func completeFromHeld(_ record: UploadRecord, entry: PossessionEntry) throws(ReceiverError)
        -> UploadReceiptRecord
    {
        let hashes = try catalog.chunkReceipts(entry.object.upload).map(\.sha256)
        guard hashes.count == record.chunks else {
            throw ReceiverError(.storageFailed, "the stored object's chunk hashes are incomplete")
        }
        let (root, head) = try Self.rootAndHead(hashes, session: record.chainSessionID ?? "")
        guard root == entry.verifier.claim.merkleRoot else {
            throw ReceiverError(.storageFailed, "the stored object's chunk hashes do not give its Merkle root")
        }
        try blobs.alias(.object(entry.object.upload), as: .object(record.id))
        return try recordCompletion(
            record, fileSHA256: entry.object.fileSHA256, chainHead: head, merkleRoot: root,
            chunks: hashes.count, size: entry.object.size, indexObject: false
        ).receipt
    }
}

/// A stored object read through the blob store, for the possession verifier. The verifier reads a sampled chunk
/// in 1 MiB steps; a read that continues where the last one ended fetches `readAhead` bytes at once, so a store
/// where every read is a request (S3) is asked a few times per chunk, not once per MiB.
final class BlobPossessionSource: PossessionSource {
    let blobs: any BlobStore
    let key: BlobKey
    let size: UInt64
    let readAhead: Int
    /// The bytes fetched last and where they start.
    private let window = Mutex<(start: UInt64, bytes: [UInt8])>((0, []))

    init(blobs: any BlobStore, key: BlobKey, size: UInt64, readAhead: Int = 8 << 20) {
        self.blobs = blobs
        self.key = key
        self.size = size
        self.readAhead = readAhead
    }

    func read(offset: UInt64, count: Int) throws(SecurityError) -> [UInt8] {
        guard count >= 0, offset <= size, UInt64(count) <= size - offset else {
            throw SecurityError(.malformedMessage, "read of \(count) bytes at \(offset) is outside \(size) bytes")
        }
        let (start, held) = window.withLock { ($0.start, $0.bytes) }
        let end = start + UInt64(held.count)
        if offset >= start, offset + UInt64(count) <= end {
            let from = Int(offset - start)
            return Array(held[from..<(from + count)])
        }
        // Sequential (this read starts where the held bytes end): fetch ahead; a jump fetches what was asked.
        let fetch = offset == end && !held.isEmpty ? Int(min(UInt64(max(readAhead, count)), size - offset)) : count
        var bytes = [UInt8](repeating: 0, count: fetch)
        let read: Int
        do {
            read = try unsafe ByteBuffers.withMutableRaw(&bytes) { raw throws(ReceiverError) in
                try unsafe blobs.read(key, at: Int64(offset), into: raw)
            }
        } catch {
            throw SecurityError(.malformedMessage, "the stored object could not be read")
        }
        guard read == fetch else { throw SecurityError(.malformedMessage, "the stored object is short") }
        window.withLock { $0 = (offset, bytes) }
        return count == fetch ? bytes : Array(bytes[0..<count])
    }
}
