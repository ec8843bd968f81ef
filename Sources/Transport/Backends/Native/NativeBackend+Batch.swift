package import AetherIO
import AetherIntegrity
import AetherSecurity

/// One whole small file to send in a batch (`docs/PROTOCOL.md` section 3.10): its bytes, their digests and the
/// one-chunk upload they make (a fresh chain session, the Merkle root over the one chunk hash, the chain head).
package struct NativeBatchFile: Sendable {
    /// The file's bytes.
    package let bytes: [UInt8]
    /// SHA-256 of the bytes: the chunk's, the whole object's, and the content id's.
    package let sha256: Digest32
    /// CRC32C of the bytes.
    package let crc32c: UInt32
    /// The commitment chain's session id.
    package let chainSessionID: String
    /// The Merkle root over the one chunk hash.
    package let merkleRoot: Digest32
    /// The chain head: the one chunk's link.
    package let chainHead: Digest32
    /// Names and values the receiver keeps with the upload (`filename`).
    package let metadata: [String: String]

    /// The file of `bytes`, digested now.
    package init(bytes: [UInt8], metadata: [String: String] = [:]) {
        self.bytes = bytes
        self.metadata = metadata
        sha256 = SHA256.hash(bytes)
        crc32c = CRC32C.checksum(bytes)
        chainSessionID = SecureRandom.bytes(16).map { String($0, radix: 16) }.joined()
        var tree = StreamingMerkleTree()
        _ = try? tree.append(sha256)
        merkleRoot = tree.root
        chainHead = ChunkCommitmentChain.link(
            chunkHash: sha256, previous: ChunkCommitmentChain.genesis(sessionID: chainSessionID))
    }

    /// The file's size.
    package var size: Int64 { Int64(bytes.count) }
}

/// How one file of a batch ended.
package enum NativeBatchOutcome: Sendable {
    /// Stored and complete, its receipt matched: the upload (for spot checks) and the receipt.
    case stored(RemoteUpload, UploadReceipt)
    /// The receiver did not store it (its problem), or its receipt differs from the file (`.receiptMismatch`).
    case refused(TransportError)
}

extension NativeFeaturesBackend {
    /// A wrapper without it serves none.
    package func capture(at location: String) async throws(TransportError) -> (bytes: [UInt8], root: String)? { nil }

    /// A wrapper without it refuses.
    package func status(at location: String, uploadID: String) async throws(TransportError) -> NativeStatusDocument {
        throw TransportError(.protocolUnsupported, "this backend reads no status of a finished upload")
    }

    /// Batches are `NativeBackend`'s; a wrapper without them refuses.
    package func send(batch files: [NativeBatchFile]) async throws(TransportError) -> [NativeBatchOutcome] {
        throw TransportError(.protocolUnsupported, "this backend sends no batches")
    }

    /// The largest file one batch of this receiver takes (0: none): within `max-chunk` and `batch-bytes`.
    package var largestBatchedFile: Int64 {
        guard server.maximumBatch > 0 else { return 0 }
        return min(server.maximumChunkSize, server.maximumBatchBytes)
    }
}

extension NativeBackend {
    /// Sends `files` in one batch (`POST {creationURL}/batch`): the document, then the files' bytes. Each file's
    /// result is compared with the file as a completion's receipt is (id, size, one chunk, SHA-256, Merkle root,
    /// chain head, CID); a file the receiver refused is `.refused` with its problem, and the others stand. The whole
    /// request failing (a reset, a refusal of the batch) throws; the files completed before it are complete at the
    /// receiver, and sending the batch again finds them held (dedup) and stores each once.
    package func send(batch files: [NativeBatchFile]) async throws(TransportError) -> [NativeBatchOutcome] {
        guard server.maximumBatch > 0 else {
            throw TransportError(.protocolUnsupported, "the receiver takes no batches (no max-batch)")
        }
        guard !files.isEmpty, files.count <= server.maximumBatch,
            files.reduce(Int64(0), { $0 + $1.size }) <= server.maximumBatchBytes,
            files.allSatisfy({ $0.size <= largestBatchedFile })
        else {
            throw TransportError(.invalidArgument, "the batch is outside the receiver's max-batch or batch-bytes")
        }
        var entries: [NativeBatchRequest.File] = []
        for file in files {
            var create = NativeCreateRequest(
                size: file.size, chunkSize: batchChunkSize(file.size), chunks: 1, chainSessionID: file.chainSessionID,
                contentID: ACI(digest: file.sha256).description)
            if server.metadata { create.metadata = Self.keptMetadata(file.metadata) }
            entries.append(
                NativeBatchRequest.File(
                    create: create, crc32c: file.crc32c, sha256: file.sha256, merkleRoot: file.merkleRoot,
                    chainHead: file.chainHead))
        }
        let document = NativeBatchRequest(files: entries).jsonBytes
        guard document.count <= AetherWire.maximumBatchDocumentBytes else {
            throw TransportError(
                .invalidArgument, "the batch's document is over \(AetherWire.maximumBatchDocumentBytes) bytes")
        }
        var body = document
        body.reserveCapacity(document.count + files.reduce(0) { $0 + $1.bytes.count })
        for file in files { body += file.bytes }
        let header = AetherBatchHeader(files: files.count, document: document.count)
        let response = try await exchange(
            "POST", batchURL,
            HTTPHeaders([
                ("Content-Type", AetherWire.batchMediaType), (AetherWire.batchField, header.fieldValue),
            ]), body: .bytes(body))
        guard response.status == 200 else { throw error(for: response, "batch") }
        let answer: NativeBatchAnswer
        do { answer = try NativeBatchAnswer(json: response.body) } catch {
            throw TransportError(
                .protocolViolation, "the batch answer is malformed (\(error.code)\(Self.memberNote(error)))")
        }
        guard answer.files.count == files.count else {
            throw TransportError(
                .protocolViolation, "the batch answer names \(answer.files.count) files, \(files.count) were sent")
        }
        var outcomes: [NativeBatchOutcome] = []
        for (file, result) in zip(files, answer.files) {
            switch result {
            case .failed(let problem):
                outcomes.append(.refused(batchRefusal(problem)))
            case .stored(let location, let receipt):
                do throws(TransportError) {
                    // The location must name the receipt's upload: a receiver that points a file at another
                    // upload's location would have the client record (and later check) the wrong object.
                    let resolved = try resolve(location)
                    let path = resolved.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
                    guard path.split(separator: "/").last.map(String.init) == receipt.id else {
                        throw TransportError(
                            .receiptMismatch, "the batch answer's location of a file does not name its receipt's upload"
                        )
                    }
                    let upload = RemoteUpload(
                        location: resolved, uploadID: receipt.id, size: file.size,
                        partSize: batchChunkSize(file.size), expires: receipt.completedAt)
                    let summary = CompletionSummary(
                        parts: [], fileSHA256: file.sha256, merkleRoot: file.merkleRoot, chainHead: file.chainHead)
                    outcomes.append(.stored(upload, try verify(receipt.jsonBytes, upload: upload, summary: summary)))
                } catch {
                    outcomes.append(.refused(error))
                }
            }
        }
        return outcomes
    }

    /// The status document of the upload at `location` (resolved against the creation URL: another origin is refused),
    /// whatever its size and chunk size; its id must be `uploadID`.
    package func status(at location: String, uploadID: String) async throws(TransportError) -> NativeStatusDocument {
        let response = try await exchange("GET", try resolve(location))
        guard response.status == 200 else { throw error(for: response, "status request") }
        let status = try statusDocument(response.body, "status answer")
        guard status.id == uploadID else {
            throw TransportError(.protocolViolation, "the status document describes another upload")
        }
        return status
    }

    /// `GET {location}/capture` (section 3.11): the manifest's bytes and `Aether-Capture-Root` when the receiver
    /// checked the capture against what it holds; nil when it serves no captures (404 `not-found` for the path, an
    /// older receiver); `.verificationFailed` when it answered that the capture is not what it holds (409
    /// `capture-mismatch`, the problem's name in the message).
    package func capture(at location: String) async throws(TransportError) -> (bytes: [UInt8], root: String)? {
        let response = try await exchange("GET", Self.appending("/capture", to: try resolve(location)))
        switch response.status {
        case 200:
            guard let root = response.headers[AetherWire.captureRootField] else {
                throw TransportError(.protocolViolation, "the capture answer has no \(AetherWire.captureRootField)")
            }
            return (response.body, root)
        case 409 where Self.problem(in: response)?.name == "capture-mismatch":
            throw TransportError(
                .verificationFailed,
                "the receiver says the stored capture is not what it holds (409\(Self.problemNote(response)))")
        case 404 where Self.problem(in: response)?.name == "not-found": return nil
        default: throw error(for: response, "capture check")
        }
    }

    /// The chunk size of a batched file's one chunk: its size rounded up to 16 KiB, at least `min-chunk`.
    func batchChunkSize(_ size: Int64) -> Int64 {
        let alignment = AetherWire.chunkAlignment
        let minimum = (server.minimumChunkSize + alignment - 1) / alignment * alignment
        return max(minimum, (max(size, 1) + alignment - 1) / alignment * alignment)
    }

    /// `{creationURL}/batch` (before a query).
    var batchURL: String { Self.appending("/batch", to: creationURL) }

    /// The error of one refused file: a digest the receiver found different is damage on the way (sent again), the
    /// rest is the receiver's refusal; the problem's name, never its detail, goes into the message.
    func batchRefusal(_ problem: ProblemDocument) -> TransportError {
        let note = "\(problem.status), problem \(problem.name)"
        switch problem.status {
        case 422:
            return TransportError(.checksumMismatch, "the receiver found the batched file's bytes differ (\(note))")
        case 429, 503: return TransportError(.throttled, "the receiver is busy (\(note) to a batched file)")
        case 413: return TransportError(.tooLarge, "the receiver refused a batched file as too large (\(note))")
        default: return TransportError(.remoteRejected, "the receiver refused a batched file (\(note))")
        }
    }
}
