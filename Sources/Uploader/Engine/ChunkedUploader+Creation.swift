import AetherIO
import AetherIntegrity
import AetherScheduling
import AetherSecurity
import AetherTransport

/// What creating the remote upload left.
enum UploadCreation {
    /// The upload exists: its first snapshot (saved), the parity scheme announced, and the dedup pre-pass's digests
    /// when it ran.
    case created(ResumeSnapshot, ParityScheme?, DedupDigest?)
    /// The destination held the content already and the possession proof passed: nothing is sent.
    case deduplicated(UploadOutcome)
}

extension ChunkedUploader {
    /// Creates the remote upload for a fresh run: the part layout (the configured size, else the first decision's,
    /// in units that runs can carry), the chain session, the parity scheme, the dedup pre-pass where the receiver
    /// offers possession, the create request under the retry policy, and the first snapshot.
    func create(
        plan: ResumePlan, fingerprint: FileFingerprint, decision: SchedulingDecision,
        emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws -> UploadCreation {
        let size = fingerprint.size
        let capabilities = backend.capabilities
        let loopback = target.isLoopback
        let layout: PartLayout
        do {
            layout = try PartLayout(
                objectSize: size,
                preferred: Int64(
                    configuration.chunkSize ?? configuration.partSize
                        ?? (configuration.flags.adaptiveChunking
                            ? Self.firstChunkSize(decision, loopback: loopback) : ChunkReadOptions.defaultChunkSize)
                ).runUnit(
                    takesRuns: configuration.chunkSize == nil && configuration.partSize == nil
                        && takesRuns()),
                capabilities: capabilities)
        } catch {
            throw UploaderError(.invalidArgument, error.message)
        }
        let sessionID = SecureRandom.bytes(16).map { String($0, radix: 16) }.joined()
        let createdScheme = paritySchemeAtCreation(decision: decision, size: size, partCount: layout.partCount)
        let creator = try sender(parity: createdScheme, compression: nil)
        let digest = try digestFirstForDedup(layout: layout, sessionID: sessionID)
        let description = UploadDescription(
            size: size, layout: layout, contentType: configuration.contentType, metadata: configuration.metadata,
            chainSessionID: sessionID, contentID: digest.map { ACI(digest: $0.sha256).description })
        let (created, _) = try await withRetries(index: -1, emit: emit) {
            () async throws(TransportError) -> (RemoteUpload, [UInt8]?) in
            if let native = creator.features.native {
                let (upload, status) = try await native.createUpload(description)
                return (upload, status.possessionChallenge)
            }
            return (try await creator.create(description), nil)
        }
        let remote = created.0
        var snapshot = ResumeSnapshot(
            filePath: target.file.bytes, destination: target.destination, mode: target.mode,
            endpoint: target.endpoint, fingerprint: ResumeSnapshot.Fingerprint(fingerprint), remote: remote,
            partSize: layout.partSize, partCount: layout.partCount, chainSessionID: sessionID,
            createdAt: clock.wallWholeSeconds())
        snapshot.acknowledged = [:]
        do {
            try await resume.save(snapshot)
        } catch {
            // Without its snapshot the upload could never be resumed or cancelled from here (a full state disk):
            // the destination is told to drop it rather than hold it open until it expires.
            try? await creator.abort(remote)
            throw error
        }
        if let challenge = created.1, let digest, let native = creator.features.native,
            let outcome = try await deduplicated(
                native, remote: remote, challenge: challenge, digest: digest, snapshot: snapshot, plan: plan,
                tier: decision.strategy.tier, emit: emit)
        {
            return .deduplicated(outcome)
        }
        return .created(snapshot, createdScheme, digest)
    }
}
