import AetherIO
import AetherIntegrity
import AetherSecurity
import Synchronization

extension UploadEngine {
    /// A fresh possession challenge (serialized) when `record`'s content id names a stored object of its size;
    /// nil otherwise. Each call issues a new single-use challenge (15 s lifetime, AetherSecurity), kept in the
    /// catalogue with its key so that whichever receiver of a fleet the answer reaches can check it.
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

    /// The verifier of the stored object `record`'s content id names (its chunk hashes read from storage once per
    /// upload and receiver, then cached), nil when there is no such object of the upload's size.
    func possessionEntry(for record: UploadRecord) throws(ReceiverError) -> PossessionEntry? {
        guard record.uploadProtocol == .native, let contentID = record.contentID,
            let object = try catalog.object(contentID: contentID), object.size == record.size,
            try blobs.size(of: .object(object.upload)) == object.size
        else { return nil }
        if let cached = state.withLock({ $0.possession[record.id] }), cached.object == object { return cached }
        let source = BlobPossessionSource(blobs: blobs, key: .object(object.upload), size: UInt64(object.size))
        let entry: PossessionEntry
        do {
            let hashes = try ProofOfPossessionProver.chunkHashes(of: source, chunkSize: UInt32(record.chunkSize))
            let verifier = try ProofOfPossessionVerifier(
                source: source, chunkSize: UInt32(record.chunkSize), chunkHashes: hashes, clock: clock)
            entry = PossessionEntry(verifier: verifier, chunkHashes: hashes, object: object)
        } catch {
            throw ReceiverError(.storageFailed, "the stored object could not be read for a possession check")
        }
        state.withLock { $0.possession[record.id] = entry }
        return entry
    }

    /// Checks a proof-of-possession response (`PossessionResponse.serialized`) against the challenge the catalogue
    /// keeps for its nonce (issued by this receiver or another of the fleet; taken out, so it answers once). A
    /// passed check completes the upload at once from the stored object (a second object entry with the same
    /// bytes) and returns the receipt; a failed, replayed, expired or unknown one is `.possessionFailed` and the
    /// upload stays open.
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
            try blobs.alias(.object(entry.object.upload), as: .object(id))
            let (root, head) = try Self.rootAndHead(entry.chunkHashes, session: record.chainSessionID ?? "")
            return try recordCompletion(
                record, fileSHA256: entry.object.fileSHA256, chainHead: head, merkleRoot: root,
                chunks: entry.chunkHashes.count, size: entry.object.size, indexObject: false
            ).receipt
        }
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
