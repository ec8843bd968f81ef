public import AetherIO
public import AetherIntegrity
import AetherTransport

/// A folder's files checked at the destination its capture manifest names (`aether verify DIR MANIFEST
/// --destination`): for each file the manifest lists and the folder holds intact, the destination is asked whether it
/// still holds that upload, complete and of that size, and then to prove it holds the bytes: a Byzantine spot check
/// (`docs/PROTOCOL.md` 3.6) of a sample of the upload's chunks, each answer a MAC over ranges of the stored bytes
/// judged against the local file's bytes, with Merkle proofs to the root the manifest records. A destination that lost
/// a file, holds other bytes or cannot answer is named per file.
public struct CaptureDestinationCheck: Sendable, Hashable {
    /// How one file stands at the destination.
    public enum Standing: Sendable, Hashable {
        /// Complete, of the manifest's size, and its spot check passed over `bytesChecked` bytes of it.
        case held(bytesChecked: Int64)
        /// The destination does not hold it (gone, expired, cancelled, or not complete).
        case notHeld(String)
        /// The destination holds it but failed the proof (wrong MACs, proofs that lead elsewhere, a late answer).
        case failed(String)
        /// It could not be checked here (another protocol than native, the destination unreachable, the local file
        /// not intact): nothing is claimed either way.
        case notChecked(String)
    }

    /// Each listed file in the manifest's order with how it stands.
    public let files: [(path: String, standing: Standing)]

    /// Files proven held.
    public var held: Int { files.count { if case .held = $0.standing { true } else { false } } }
    /// True when every listed file was proven held.
    public var isHeld: Bool { held == files.count }

    public static func == (left: Self, right: Self) -> Bool {
        left.files.map(\.path) == right.files.map(\.path) && left.files.map(\.standing) == right.files.map(\.standing)
    }

    public func hash(into hasher: inout Hasher) {
        for (path, standing) in files {
            hasher.combine(path)
            hasher.combine(standing)
        }
    }
}

extension CaptureManifest {
    /// Files checked at the destination at once.
    static let destinationChecksAtOnce = 8

    /// Checks the destination holds each file of this manifest whose copy in `directory` is intact (run `verify
    /// (directory:)` first; a file it found missing or different is `.notChecked`): per file its upload's status
    /// (complete, the manifest's size), the local file's chunk hashes at the upload's chunk size (their Merkle root
    /// must be the manifest's), then a spot check through the same code as an upload's (`ChunkedUploader.spotCheck`).
    /// `options` gives the HTTP client, the bearer token and the state directory (for its key only; nothing is
    /// written there). Only native destinations can prove what they hold; others are `.notChecked`.
    public func verifyAtDestination(
        directory: FilePath, local: CaptureVerification, options: UploadJob.Options
    ) async throws -> CaptureDestinationCheck {
        let context = try UploadContext(options: options)
        defer { context.client.shutDown() }
        let problems = Dictionary(local.problems.map { ($0.path, $0.problem) }, uniquingKeysWith: { first, _ in first })
        let probes = ProbeCache()
        var standings = [CaptureDestinationCheck.Standing?](repeating: nil, count: files.count)
        try await withThrowingTaskGroup(of: (Int, CaptureDestinationCheck.Standing).self) { group in
            var next = 0
            func add() {
                let index = next
                next += 1
                let entry = files[index]
                group.addTask {
                    if problems[entry.path] != nil { return (index, .notChecked("the local file is not intact")) }
                    return (
                        index,
                        await Self.standing(
                            of: entry, in: directory, context: context, probes: probes, options: options)
                    )
                }
            }
            while next < min(files.count, Self.destinationChecksAtOnce) { add() }
            while let (index, standing) = try await group.next() {
                standings[index] = standing
                if next < files.count { add() }
            }
        }
        return CaptureDestinationCheck(
            files: zip(files, standings).map { ($0.path, $1 ?? .notChecked("not checked")) })
    }

    /// The creation URL and upload id of an upload's HTTP location (`http(s)://.../uploads/{id}[?query]`), nil for
    /// another kind of location (`s3://`).
    static func nativeUpload(at location: String) -> (creation: String, uploadID: String)? {
        guard location.hasPrefix("http://") || location.hasPrefix("https://"),
            let slash = location.split(separator: "?", maxSplits: 1).first?.lastIndex(of: "/")
        else { return nil }
        return (String(location[..<slash]), String(location[location.index(after: slash)...].prefix { $0 != "?" }))
    }

    /// One probe per creation URL, shared by the files' checks.
    actor ProbeCache {
        private var probed: [String: DetectedBackend] = [:]

        func backend(_ url: String, context: UploadContext) async throws -> DetectedBackend {
            if let known = probed[url] { return known }
            let detected = try await context.probe(url) { _ in }
            probed[url] = detected
            return detected
        }
    }

    private static func standing(
        of entry: Entry, in directory: FilePath, context: UploadContext, probes: ProbeCache, options: UploadJob.Options
    ) async -> CaptureDestinationCheck.Standing {
        let location = entry.location
        guard let (creation, uploadID) = nativeUpload(at: location) else {
            return .notChecked("its destination (\(location.prefix(64))) is not a native receiver")
        }
        do {
            let detected = try await probes.backend(creation, context: context)
            guard let native = detected.backend.features.native else {
                return .notChecked("its destination speaks \(detected.mode), which cannot prove what it holds")
            }
            let status: NativeStatusDocument
            do {
                status = try await native.status(at: location, uploadID: uploadID)
            } catch {
                if error.code == .gone {
                    return .notHeld("the destination no longer has its upload (\(error.message))")
                }
                throw error
            }
            guard status.state == .complete else {
                return .notHeld("its upload at the destination is \(status.state), not complete")
            }
            guard status.size == entry.size, status.chunkSize > 0,
                ChunkReadOptions.chunkSizeRange.contains(Int(clamping: status.chunkSize))
            else {
                return .failed("the destination's upload is \(status.size) bytes in chunks of \(status.chunkSize)")
            }
            // An empty file has no bytes to prove: complete and empty is all there is to hold.
            if entry.size == 0 { return .held(bytesChecked: 0) }
            let path = directory.appending(try FilePath(bytes: Array(entry.path.utf8)))
            let file = try GuardedFile(path: path)
            let digests = try FileDigester.digest(
                path: path, options: ChunkReadOptions(chunkSize: Int(status.chunkSize)), parallel: false)
            let hashes = digests.chunks.map(\.sha256)
            var tree = StreamingMerkleTree()
            for hash in hashes { _ = try tree.append(hash) }
            guard tree.root.hex == entry.merkleRoot, digests.file.sha256.hex == entry.sha256 else {
                return .notChecked("the local file's digests at the upload's chunk size are not the manifest's")
            }
            var configuration = options.configuration
            configuration.flags.byzantineSampling = true
            let remote = RemoteUpload(
                location: location, uploadID: uploadID, size: entry.size, partSize: status.chunkSize)
            let report = try await context.spotCheck(
                file: path, destination: location, backend: detected, remote: remote, chunkHashes: hashes,
                identity: file.identity, configuration: configuration
            ) { _ in }
            if let reason = report.notMade { return .notChecked("no spot check could be made: \(reason)") }
            return report.passed
                ? .held(bytesChecked: report.bytesChecked) : .failed("its spot check did not pass")
        } catch {
            let failure = CaptureJob.cancelledOr(error)
            if failure.code == .verificationFailed { return .failed(failure.message) }
            return .notChecked(CaptureJob.message(error))
        }
    }
}

extension CaptureJob {
    /// With `Options.recheckDestination`: which of the journal's finished files the destination no longer holds
    /// complete, by relative path, to be sent again. Each native upload's status is asked (eight at once): gone (404,
    /// 410), not complete, or of another size is lost. A destination that cannot be asked (another protocol than
    /// native, a failure on the way) is trusted as the journal says; the job's own uploads then meet the same failure.
    func lostAtDestination(_ results: [CaptureFileResult], context: UploadContext) async throws -> Set<[UInt8]> {
        let probes = CaptureManifest.ProbeCache()
        var lost: Set<[UInt8]> = []
        try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            var next = 0
            func add() {
                let result = results[next]
                next += 1
                group.addTask {
                    await Self.isLost(result, context: context, probes: probes) ? result.relativePath : nil
                }
            }
            while next < min(results.count, CaptureManifest.destinationChecksAtOnce) { add() }
            while let answer = try await group.next() {
                if let answer { lost.insert(answer) }
                if next < results.count { add() }
            }
        }
        return lost
    }

    private static func isLost(_ result: CaptureFileResult, context: UploadContext, probes: CaptureManifest.ProbeCache)
        async -> Bool
    {
        let location = result.location
        guard let (creation, uploadID) = CaptureManifest.nativeUpload(at: location),
            let detected = try? await probes.backend(creation, context: context),
            let native = detected.backend.features.native
        else { return false }
        do {
            let status = try await native.status(at: location, uploadID: uploadID)
            return status.state != .complete || status.size != result.size
        } catch {
            return error.code == .gone
        }
    }
}
