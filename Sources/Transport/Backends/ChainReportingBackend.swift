package import AetherIO

/// A backend whose destination keeps the upload's commitment chain and can say how far it reaches (native
/// `aether/1`): resume level 3 compares that head with the local chain before trusting the stored prefix. A backend
/// offers it through `features.chain`.
package protocol ChainReportingBackend: UploadBackend {
    /// The contiguous prefix of parts the destination committed and its chain head; nil when it has none yet.
    func chainState(of upload: RemoteUpload) async throws(TransportError) -> ChainState?
}

/// How far a destination's commitment chain reaches.
package struct ChainState: Sendable, Hashable {
    /// Parts `0..<count` are committed.
    package let count: Int
    /// The link of part `count - 1` (the genesis when `count` is 0).
    package let head: Digest32

    /// A chain state.
    package init(count: Int, head: Digest32) {
        self.count = count
        self.head = head
    }
}
