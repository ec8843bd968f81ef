// The README's library examples, verbatim: every ```swift block of README.md is one function below (its
// `import` lines are the imports of this file). scripts/check-readme-examples.py, run by `make test`, fails when
// a README block no longer appears here; the build fails when an example stops compiling; ReadmeExamplesTests
// runs each one and checks its result.

import AetherCoding
import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherScheduling
import AetherSecurity
import AetherTransport
import AetherUploader

/// SHA-256 and CRC32C of a whole file and of each 1 MiB chunk, in one pass over the file.
func digestFile(at path: String) throws -> (sha256: Digest32, chunks: [ChunkDigest]) {
    let (file, chunks) = try FileDigester.digest(path: path, options: ChunkReadOptions(chunkSize: 1 << 20))
    return (file.sha256, chunks)
}

/// The Merkle root over chunk digests, one leaf at a time (the tree keeps O(log n) nodes),
/// and an inclusion proof for one chunk checked against that root.
func merkleRoot(of chunkHashes: [Digest32], proving index: Int) throws -> (root: Digest32, proven: Bool) {
    var tree = StreamingMerkleTree()
    for hash in chunkHashes { try tree.append(hash) }
    let proof = try MerkleProofBuilder(chunkHashes: chunkHashes).proof(forLeaf: index)
    let proven = proof.verify(chunkHash: chunkHashes[index], root: tree.root, leafCount: UInt64(chunkHashes.count))
    return (tree.root, proven)
}

/// Four data shards and two parity shards: any two shards may be lost.
func rebuildAfterLosingTwoShards(_ data: [[UInt8]]) throws -> [[UInt8]] {
    let code = try ReedSolomonCode(dataShards: 4, parityShards: 2)
    var shards: [[UInt8]?] = data + (try code.encode(data))
    shards[0] = nil  // a data shard
    shards[5] = nil  // a parity shard
    return try code.decode(shards)
}

/// What the fusion scheduler picks (tier, chunk size, parts in flight) after 30 s of a steady link.
func plan(forSteadyMegabitsPerSecond mbps: Double) -> SchedulingDecision {
    let scheduler = FusionScheduler()
    for second in 1...30 {
        scheduler.record(BandwidthMeasurement(bitsPerSecond: mbps * 1e6, duration: 1, timestamp: Double(second)))
    }
    return scheduler.decide(SchedulingContext(roundTripTime: 0.04))
}

/// A key derived for one purpose seals a message; one changed byte is refused with `.authenticationFailed`.
func sealOpenAndTamper(_ message: [UInt8]) throws -> (opened: [UInt8], tamperingRefused: Bool) {
    let master = SymmetricKey(size: .bits256)
    let key = try HKDF.deriveKey(inputKeyMaterial: master, salt: Array("example".utf8), info: Array("notes v1".utf8))
    let header = Array("note 7".utf8)
    var sealed = try AESGCM.sealCombined(message, authenticating: header, key: key)
    let opened = try AESGCM.openCombined(sealed, authenticating: header, key: key)
    sealed[sealed.count - 1] ^= 1
    do throws(SecurityError) {
        _ = try AESGCM.openCombined(sealed, authenticating: header, key: key)
        return (opened, false)
    } catch {
        return (opened, error.code == .authenticationFailed)
    }
}

/// Which upload protocol a URL speaks (native `aether/1`, IETF resumable upload, tus), and the backend for it.
func detectProtocol(at url: String, client: HTTPClient) async throws -> (TransportMode, any UploadBackend) {
    let detected = try await BackendDetector(client: client).detect(url)
    return (detected.mode, detected.backend)
}

/// A receiver on 127.0.0.1 and a free port, storing under `directory` (`aether serve` without the flags).
func startReceiver(storingIn directory: String) throws -> ReceiverServer {
    let server = try ReceiverServer(ReceiverServer.Options(directory: FilePath(directory)))
    return server  // server.url is http://127.0.0.1:PORT; uploads go to server.url + "/uploads"
}

/// Where the receiver keeps the finished object of an upload whose receipt names `location`.
func storedObject(at location: String, storingIn directory: String) throws -> FilePath {
    let id = try UploadID(location.split(separator: "/").last ?? "")
    return try DirectoryBlobStore(root: FilePath(directory)).path(of: .object(id))
}

/// Uploads `file` to `destination` (an `aether serve`, IETF or tus URL, probed; or s3://bucket/key): resumable
/// (the same call again, with the same file and destination, resumes it), verified (the receipt's SHA-256, Merkle
/// root and chain head are compared with the local ones).
func upload(file: String, to destination: String, stateDirectory: String) async throws -> UploadOutcome {
    var options = UploadJob.Options()
    options.stateDirectory = FilePath(stateDirectory)
    let job = try UploadJob(file: FilePath(file), destination: destination, options: options)
    var outcome: UploadOutcome?
    for try await event in job.events() {
        switch event {
        case .progress(let progress): _ = progress.fraction  // acknowledged share, 0...1
        case .completed(let done): outcome = done
        default: break
        }
    }
    guard let outcome else { throw UploaderError(.cancelled, "the upload ended without completing") }
    return outcome
}

/// Uploads every file under `folder` to `destination` (s3://bucket/prefix/ or an upload URL) as one capture:
/// resumable (the same call again skips finished files and resumes the rest), each file verified, and a manifest
/// with one root over all files stored beside them.
func uploadFolder(_ folder: String, to destination: String, stateDirectory: String) async throws -> CaptureOutcome {
    var options = CaptureJob.Options()
    options.upload.stateDirectory = FilePath(stateDirectory)
    let job = try CaptureJob(directory: FilePath(folder), destination: destination, options: options)
    var outcome: CaptureOutcome?
    for try await event in job.events() {
        switch event {
        case .progress(let progress): _ = (progress.completedFiles, progress.acknowledgedBytes)
        case .fileFailed(let failure): _ = failure.message  // the others go on; the same call retries it
        case .completed(let done): outcome = done
        default: break
        }
    }
    guard let outcome, outcome.complete else { throw UploaderError(.transportFailed, "some files did not arrive") }
    return outcome
}
