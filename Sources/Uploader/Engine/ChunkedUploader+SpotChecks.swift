import AetherIO
import AetherIntegrity
import AetherTransport

/// Byzantine spot checks (native, `docs/PROTOCOL.md` 3.6, `docs/UPLOADER.md`) through `ByzantineVerifier`: once
/// every chunk is acknowledged and before the completion, the receiver proves it holds the sampled chunks' bytes.
extension ChunkedUploader {
    /// One attempt at a round of checks, as seen once its request ended.
    enum SpotCheckRound: Sendable {
        /// The verifier judged the answer.
        case judged(ByzantineOutcome)
        /// The answer was refused before its MACs were judged (an old format, a recorded hash or proof that differs,
        /// a chunk the receiver says it does not hold); the verifier failed its chunks.
        case refused(ByzantineOutcome, String)
        /// The receiver's status does not list a sampled chunk it acknowledged.
        case notHeld(Int)
        /// The challenge could not be issued within 100 ms of the acknowledgement (our delay).
        case missedWindow
        /// The challenge could not be made here.
        case failed(UploaderError)
    }

    /// The most bytes one round reads from the file and holds, whatever `challenge-bytes` the receiver advertises.
    static let spotCheckRoundBytes: Int64 = 16 << 20

    /// The shortest range checked, unless it is a whole chunk: a MAC over a few bytes can be guessed without them
    /// (one byte: one chance in 256), so a receiver advertising a smaller `challenge-bytes` is not checked at all.
    static let spotCheckMinimumRangeBytes: Int64 = 4096

    /// Rounds whose challenge we issue too late, in a row, before the checks stop with an error.
    static let spotCheckMissedWindowLimit = 8

    /// Checks that the receiver holds the sampled chunks of `remote`: the sample is `ByzantineVerifier`'s (the spec's
    /// count, Fisher-Yates over the CSPRNG); each round takes pending samples whose ranges fit the receiver's
    /// `challenge-bytes` and at most 16 MiB (whole chunks where they fit, else a random range of each), reads those
    /// bytes from the file
    /// under the change guard (a file that changed is `.fileChanged`), prepares a challenge with a fresh nonce, asks
    /// the receiver's status (its acknowledgement that it holds them now), issues the challenge within 100 ms of it
    /// and has the answer judged against the client's bytes.
    ///
    /// A wrong answer, one refused before judging, or a sampled chunk no longer held means the receiver does not
    /// hold what it acknowledged: no retry can change stored bytes (a chunk sent again with the same SHA-256 is
    /// answered "already stored"), so the upload fails at once with `.verificationFailed`. A late answer is a strike
    /// and its chunks are checked again; at three strikes the receiver is untrusted and the upload fails the same
    /// way; so is a request that got no answer within `NativeBackend.spotCheckDeadline`. A request that fails on the
    /// way otherwise (a reset, a refused connection, a busy receiver) is withdrawn without a strike and retried with
    /// backoff like every request, each attempt with a fresh nonce.
    ///
    /// Returns a report that says `passed` only when every sampled chunk was verified; no check is made (and the
    /// report says why) with the `byzantine-sampling` flag off, on another protocol, or against a receiver that does
    /// not advertise spot checks of version 2.
    nonisolated func spotCheck(
        _ remote: RemoteUpload, chunkHashes: [Digest32], identity: FileIdentity,
        emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws -> SpotCheckReport {
        guard configuration.flags.byzantineSampling else {
            return SpotCheckReport(notMade: "byzantine-sampling is switched off")
        }
        guard let native = backend.features.native else {
            return SpotCheckReport(notMade: "the protocol has no spot checks")
        }
        guard native.server.answersSpotChecks, let budget = native.server.maximumChallengeBytes else {
            return SpotCheckReport(
                notMade: "the receiver does not advertise spot checks of version \(AetherWire.spotCheckVersion)")
        }
        // Whole chunks when the budget holds one, else ranges of the whole budget: at least the floor either way.
        let floor = min(Self.spotCheckMinimumRangeBytes, remote.partSize, remote.size)
        guard budget >= floor else {
            return SpotCheckReport(
                notMade:
                    "the receiver's challenge-bytes (\(budget)) is under the \(floor) a range needs (answers over fewer "
                    + "bytes can be guessed without them)")
        }
        let file: GuardedFile
        do {
            file = try GuardedFile(path: target.file)
        } catch {
            throw Self.readError(error)
        }
        guard file.identity == identity else {
            throw UploaderError(.fileChanged, "\(target.file) changed while it was uploaded")
        }
        let verifier = ByzantineVerifier(chunkCount: chunkHashes.count, clock: clock)
        let uploadID = NativeBackend.spotCheckUploadID(remote)
        var bytesChecked: Int64 = 0
        var missedInARow = 0
        while !verifier.pendingChunks.isEmpty {
            let items = try Self.spotCheckItems(
                verifier.pendingChunks, partSize: remote.partSize, size: remote.size,
                budget: min(budget, Self.spotCheckRoundBytes))
            let bytes = try Self.read(items, from: file, partSize: remote.partSize, chunkHashes: chunkHashes)
            let round = try await spotCheckRound(
                native, remote, verifier: verifier, uploadID: uploadID, items: items, bytes: bytes,
                chunkHashes: chunkHashes, emit: emit)
            switch round {
            case .missedWindow:
                missedInARow += 1
                guard missedInARow < Self.spotCheckMissedWindowLimit else {
                    throw UploaderError(
                        .integrityFailed,
                        "the spot checks could not be issued within 100 ms of the receiver's acknowledgement "
                            + "\(missedInARow) times in a row (this machine is too busy); the upload is not completed")
                }
                continue
            case .failed(let error):
                throw error
            case .notHeld(let index):
                throw UploaderError(
                    .verificationFailed,
                    "the receiver no longer lists chunk \(index), which it acknowledged; the upload is not completed")
            case .refused(_, let message):
                throw UploaderError(
                    .verificationFailed, "the receiver failed a Byzantine spot check: \(message)")
            case .judged(let outcome):
                missedInARow = 0
                switch outcome {
                case .verified:
                    bytesChecked += items.reduce(0) { $0 + $1.length }
                case .strike(let chunks, .wrongResponse, let strikes):
                    throw UploaderError(
                        .verificationFailed,
                        "the receiver failed a Byzantine spot check: its answer for chunk "
                            + "\(chunks.map(String.init).joined(separator: ", ")) is not the MAC of the bytes sent "
                            + "(it does not hold them; strike \(strikes) of 3)")
                case .strike, .untrusted: break
                }
            }
            if verifier.isUntrusted {
                throw UploaderError(
                    .verificationFailed,
                    "the receiver failed 3 Byzantine spot checks (answers later than 500 ms); it is not trusted and "
                        + "the upload is not completed")
            }
        }
        return SpotCheckReport(verifier: verifier, bytesChecked: bytesChecked)
    }

    /// One round, with retries of requests that fail on the way: status (the acknowledgement), issue, challenge,
    /// judgement. Each attempt prepares a fresh nonce (the last one may have reached the receiver).
    private nonisolated func spotCheckRound(
        _ native: any NativeFeaturesBackend, _ remote: RemoteUpload, verifier: ByzantineVerifier, uploadID: [UInt8],
        items: [ByzantineChallenge.Item], bytes: [[UInt8]], chunkHashes: [Digest32],
        emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws -> SpotCheckRound {
        let prepare = { @Sendable () throws(UploaderError) -> ByzantineVerifier.PreparedChallenge in
            do throws(IntegrityError) {
                return try verifier.prepare(uploadID: uploadID, items: items, bytes: bytes)
            } catch {
                throw UploaderError(.integrityFailed, error.message)
            }
        }
        let (round, _) = try await withRetries(index: -1, emit: emit) {
            () async throws(TransportError) -> SpotCheckRound in
            // Prepared before the acknowledgement: nothing but the issue lies between it and the challenge.
            let prepared: ByzantineVerifier.PreparedChallenge
            do throws(UploaderError) { prepared = try prepare() } catch { return .failed(error) }
            let status = try await native.status(of: remote)
            for item in items {
                guard status.state == .complete || status.received[item.index] else { return .notHeld(item.index) }
                _ = verifier.acknowledged(chunk: item.index)
            }
            let challenge: ByzantineChallenge
            do throws(IntegrityError) {
                challenge = try verifier.issue(prepared)
            } catch  where error.code == .challengeWindowMissed {
                return .missedWindow
            } catch {
                return .failed(UploaderError(.integrityFailed, error.message))
            }
            do throws(TransportError) {
                let macs = try await native.challenge(remote, challenge, chunkHashes: chunkHashes, requireProofs: true)
                return .judged(verifier.receive(challenge, responses: macs))
            } catch {
                switch error.code {
                case .verificationFailed, .protocolViolation:
                    return .refused(verifier.reject(challenge), error.message)
                case .timedOut:
                    // No answer within the deadline, so none within 500 ms: a strike, and its chunks wait again.
                    if let outcome = verifier.expireOverdue().first { return .judged(outcome) }
                    verifier.withdraw(challenge)
                    throw error
                default:
                    verifier.withdraw(challenge)
                    throw error
                }
            }
        }
        return round
    }

    /// The ranges of the next round: as many pending samples as fit (at most 64), each its whole chunk when the
    /// share of `budget` it gets allows, else a range of that share at a random offset in the chunk.
    static func spotCheckItems(_ pending: [Int], partSize: Int64, size: Int64, budget: Int64) throws(UploaderError)
        -> [ByzantineChallenge.Item]
    {
        let count = min(pending.count, AetherWire.maximumChallengeIndices, Int(max(1, budget / max(1, partSize))))
        let share = budget / Int64(max(1, count))
        var generator = SecureRandom()
        var items: [ByzantineChallenge.Item] = []
        for index in pending.prefix(count) {
            let length = max(0, min(partSize, size - Int64(index) * partSize))
            let checked = min(length, share)
            let offset = checked < length ? Int64.random(in: 0...(length - checked), using: &generator) : 0
            do {
                items.append(try ByzantineChallenge.Item(index: index, offset: offset, length: checked))
            } catch {
                throw UploaderError(.integrityFailed, error.message)
            }
        }
        return items
    }

    /// The client's bytes of each range, read from `file` now under the change guard; a whole chunk must hash to
    /// the SHA-256 it was sent with, else the file changed under the upload.
    static func read(
        _ items: [ByzantineChallenge.Item], from file: GuardedFile, partSize: Int64, chunkHashes: [Digest32]
    ) throws(UploaderError) -> [[UInt8]] {
        var ranges: [[UInt8]] = []
        for item in items {
            var bytes = [UInt8](repeating: 0, count: Int(item.length))
            let offset = Int64(item.index) * partSize + item.offset
            let read = unsafe bytes.withUnsafeMutableBytes { raw in
                Result { () throws(IOError) -> Int in try unsafe file.read(at: offset, into: raw) }
            }
            let count: Int
            do { count = try read.get() } catch { throw readError(error) }
            guard count == bytes.count else {
                throw UploaderError(.fileChanged, "\(file.path) ended before chunk \(item.index), which was sent")
            }
            let wholeChunk = item.offset == 0 && item.length == min(partSize, file.identity.size - offset)
            if wholeChunk, item.index < chunkHashes.count, SHA256.hash(bytes) != chunkHashes[item.index] {
                throw UploaderError(.fileChanged, "chunk \(item.index) of \(file.path) changed since it was sent")
            }
            ranges.append(bytes)
        }
        do { try file.verifyUnchanged() } catch { throw readError(error) }
        return ranges
    }
}
