/// What a backend offers beyond `UploadBackend`, declared once by the backend (as tusd's composer registers each
/// store's extensions once): the uploader asks these fields and never casts a backend to find out. Each feature is
/// the backend itself seen through the protocol of that feature, or nil when it does not offer it.
public struct BackendFeatures: Sendable {
    /// Several parts in one request, the destination's holdings with the received prefixes of cut parts, and runs
    /// that continue from them (native, IETF, tus).
    package var runs: (any RunSendingBackend)?
    /// The native protocol's features: parity shards, content codings, spot checks, possession dedup, status.
    package var native: (any NativeFeaturesBackend)?
    /// The head of the destination's commitment chain over its stored prefix (resume level 3).
    package var chain: (any ChainReportingBackend)?
    /// Whether the parts of a file still being written (`aether upload --follow`) may travel several at a time: the
    /// protocol stores each part on its own whatever the final length (native chunks, S3 parts), where an append
    /// (IETF, tus) takes one request at a time.
    public var parallelFollow: Bool

    /// The features offered; none by default.
    package init(
        runs: (any RunSendingBackend)? = nil, native: (any NativeFeaturesBackend)? = nil,
        chain: (any ChainReportingBackend)? = nil, parallelFollow: Bool = false
    ) {
        self.runs = runs
        self.native = native
        self.chain = chain
        self.parallelFollow = parallelFollow
    }
}
