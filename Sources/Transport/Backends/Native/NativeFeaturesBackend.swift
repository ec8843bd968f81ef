package import AetherIO
package import AetherIntegrity
package import AetherSecurity

/// A backend that speaks the native protocol's features (`docs/PROTOCOL.md` 3.1, 3.3, 3.6, 3.7): a parity scheme
/// announced at creation and parity shards, content codings on chunks, Byzantine spot checks and
/// proof-of-possession dedup.
/// `NativeBackend` is one; tests wrap it to withhold or count requests. A backend offers it through
/// `features.native`.
package protocol NativeFeaturesBackend: UploadBackend {
    /// What the receiver announced in `Aether-Capabilities`.
    var server: AetherCapabilities { get }
    /// How this backend talks (its parity scheme and compression).
    var options: NativeBackendOptions { get }
    /// This backend with other options, over the same connection.
    func with(options: NativeBackendOptions) throws(TransportError) -> Self
    /// Creates the upload and returns the receiver's first status document (with a possession challenge when
    /// the receiver already holds the content id).
    func createUpload(_ description: UploadDescription) async throws(TransportError) -> (
        upload: RemoteUpload, status: NativeStatusDocument
    )
    /// The receiver's status document of `upload`.
    func status(of upload: RemoteUpload) async throws(TransportError) -> NativeStatusDocument
    /// Sends one parity shard of the scheme in `options.parity`.
    func send(_ shard: ParityShard, to upload: RemoteUpload) async throws(TransportError) -> AetherReceiptHeader
    /// Sends the spot check `challenge` and returns the receiver's MACs, its recorded hashes and proofs checked
    /// against `chunkHashes` (`NativeBackend.challenge`).
    func challenge(
        _ upload: RemoteUpload, _ challenge: ByzantineChallenge, chunkHashes: [Digest32], requireProofs: Bool
    ) async throws(TransportError) -> [Digest32]
    /// Answers a possession challenge; the receipt when it passed (the upload is then complete), nil when not.
    func provePossession(
        _ upload: RemoteUpload, challenge: [UInt8], prover: ProofOfPossessionProver, summary: CompletionSummary
    ) async throws(TransportError) -> UploadReceipt?
    /// The status document of the upload at `location` whatever its layout (checked only to name `uploadID`): what
    /// a check of a finished upload asks first (`NativeBackend.status(at:uploadID:)`).
    func status(at location: String, uploadID: String) async throws(TransportError) -> NativeStatusDocument
    /// The capture manifest stored as the upload at `location`, as the receiver checked and serves it (section 3.11):
    /// its bytes and root; nil when the receiver serves no captures (an older one).
    func capture(at location: String) async throws(TransportError) -> (bytes: [UInt8], root: String)?
    /// Sends whole small files in one batch (section 3.10), one outcome per file (`NativeBackend.send(batch:)`).
    func send(batch files: [NativeBatchFile]) async throws(TransportError) -> [NativeBatchOutcome]
}
