public import AetherIO

/// The destination's word that the object is stored.
public struct UploadReceipt: Sendable, Hashable {
    /// Where the object is.
    public var location: String
    /// Its size in bytes.
    public var size: Int64
    /// The object's entity tag, if any.
    public var entityTag: String?
    /// Digests the destination computed itself from stored bytes (native receipt); nil where the protocol
    /// gives none, so the caller knows what was and was not verified by the server.
    public var serverSHA256: Digest32?
    /// The Merkle root the destination computed (native).
    public var serverMerkleRoot: Digest32?
    /// The chain head the destination computed (native).
    public var serverChainHead: Digest32?
    /// Digests the protocol lets the destination report but this receipt could not carry (`sha256` of an IETF
    /// upload found complete before this client's completing request: the digest of that answer is not asked
    /// again), so the caller says they were not checked rather than that they matched.
    public var unchecked: [String] = []
    /// Why `unchecked` is not empty, for people.
    public var uncheckedReason: String?

    /// A receipt.
    public init(
        location: String, size: Int64, entityTag: String? = nil, serverSHA256: Digest32? = nil,
        serverMerkleRoot: Digest32? = nil, serverChainHead: Digest32? = nil
    ) {
        self.location = location
        self.size = size
        self.entityTag = entityTag
        self.serverSHA256 = serverSHA256
        self.serverMerkleRoot = serverMerkleRoot
        self.serverChainHead = serverChainHead
    }
}
