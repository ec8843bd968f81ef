import AetherIO
import AetherIntegrity
import AetherTransport

/// Reading and digesting the parts: each is read once, hashed (SHA-256 and CRC32C), committed to the Merkle tree and
/// commitment chain, checked against what an earlier run recorded, and given to parity; parts the destination holds
/// are read and hashed but not sent.
extension ChunkedUploader {
    /// The next part to send: reads, hashes, commits to the ledger; skips parts the destination holds.
    func nextPart() throws -> PartToSend? {
        guard var run = state else { return nil }
        defer { state = run }
        while true {
            try Task.checkCancellation()
            let part: PartToSend
            if run.machine.snapshot.remote.size == 0 {
                guard run.nextIndex == 0 else { return nil }
                let empty = SHA256.hash([UInt8]())
                _ = try Self.append(run.ledger, empty)
                run.chunkHashes.append(empty)
                part = PartToSend(
                    index: 0, offset: 0, body: .empty, length: 0, sha256: empty, crc32c: 0,
                    link: run.ledger.chainHead, via: run.variants.plain)
            } else {
                guard let chunk = try Self.next(run.reader) else { return nil }
                let digest = Self.digest(of: chunk, run: &run)
                _ = try Self.append(run.ledger, digest.sha256)
                run.chunkHashes.append(digest.sha256)
                if let known = run.knownHashes[chunk.index], known != digest.sha256 {
                    throw PartMismatch(index: chunk.index, remote: run.machine.snapshot.remote)
                }
                // A part the destination holds from an earlier run, with the checksum it reports for it (S3 ListParts):
                // the same check its upload's answer had.
                if let theirs = run.machine.acknowledged[chunk.index]?.checksumCRC32C, theirs != digest.crc32c {
                    throw UploaderError(
                        .verificationFailed,
                        "the destination holds part \(chunk.index) with CRC32C \(Self.hex(theirs)), the file's part has "
                            + "\(Self.hex(digest.crc32c))")
                }
                part = PartToSend(
                    index: chunk.index, offset: chunk.offset, body: .chunks([chunk]), length: Int64(chunk.count),
                    sha256: digest.sha256, crc32c: digest.crc32c, link: run.ledger.chainHead,
                    via: Self.sender(for: run))
                try collectParity(&run, chunk: chunk, isNew: !run.machine.holds(chunk.index))
            }
            run.nextIndex += 1
            if run.machine.holds(part.index) { continue }
            run.machine.partRead(length: part.length)
            return part
        }
    }

    static func ledger(sessionID: String, count: Int) throws(UploaderError) -> ChunkIntegrityLedger {
        do {
            return try ChunkIntegrityLedger(sessionID: sessionID, plannedChunkCount: count)
        } catch {
            throw UploaderError(.integrityFailed, error.message)
        }
    }

    static func append(_ ledger: ChunkIntegrityLedger, _ digest: Digest32) throws(UploaderError)
        -> ChunkIntegrityLedger.Entry
    {
        do {
            return try ledger.append(chunkHash: digest)
        } catch {
            throw UploaderError(.integrityFailed, error.message)
        }
    }

    static func next(_ reader: FileChunkReader) throws(UploaderError) -> Chunk? {
        do {
            return try reader.next()
        } catch {
            throw readError(error)
        }
    }

    static func readError(_ error: IOError) -> UploaderError {
        if error.code == .fileChanged {
            return UploaderError(.fileChanged, error.message)
        }
        return UploaderError(.readFailed, error.message, errno: error.errno)
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
