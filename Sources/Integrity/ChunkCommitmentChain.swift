public import AetherIO

/// A hash chain that commits to every chunk in order, with jump links for O(√n) resume checks.
///
/// - Genesis: `SHA-256("Aether3D_CC_GENESIS_" || session id as UTF-8)`.
/// - Link `i`: `L[i] = SHA-256("CCv1\0" || chunk SHA-256[i] || L[i-1])`, with `L[-1]` = genesis.
/// - Jump stride: `s = ceil(sqrt(n))` for the planned chunk count `n` (at least 1).
/// - Jump link `k >= 1`: `J[k] = SHA-256("CCJv1\0" || L[k*s - 1] || J[k-1])`, with `J[0]` = genesis,
///   made as soon as link `k*s - 1` exists. A chain of `m` links has `m / s` jump links.
///
/// Every comparison of links is constant time (`Digest32.==`).
public struct ChunkCommitmentChain: Sendable {
    /// Domain tag of a link (5 bytes, including the NUL).
    public static let linkDomain: [UInt8] = Array("CCv1\0".utf8)
    /// Domain tag of a jump link (6 bytes, including the NUL).
    public static let jumpDomain: [UInt8] = Array("CCJv1\0".utf8)
    /// Prefix of the genesis message.
    public static let genesisPrefix: [UInt8] = Array("Aether3D_CC_GENESIS_".utf8)

    /// The session the chain belongs to.
    public let sessionID: String
    /// `SHA-256("Aether3D_CC_GENESIS_" || sessionID)`.
    public let genesis: Digest32
    /// Links between jump links: `ceil(sqrt(planned chunk count))`.
    public let stride: Int
    /// Links made so far.
    public private(set) var count: Int = 0
    /// The newest link (the genesis before any chunk).
    public private(set) var head: Digest32
    /// Jump links `J[1]`, `J[2]`, ...
    public private(set) var jumpLinks: [Digest32] = []

    /// A new chain for a session that will commit about `plannedChunkCount` chunks.
    public init(sessionID: String, plannedChunkCount: Int) throws(IntegrityError) {
        guard !sessionID.isEmpty else { throw IntegrityError(.invalidArgument, "the session id must not be empty") }
        guard plannedChunkCount >= 0 else {
            throw IntegrityError(.invalidArgument, "planned chunk count \(plannedChunkCount) is negative")
        }
        self.sessionID = sessionID
        self.genesis = Self.genesis(sessionID: sessionID)
        self.stride = Self.stride(forChunkCount: plannedChunkCount)
        self.head = genesis
    }

    /// Resumes from a checkpoint (its shape is checked; its links are checked by the verify functions).
    public init(restoring checkpoint: ChainCheckpoint) {
        sessionID = checkpoint.sessionID
        genesis = Self.genesis(sessionID: checkpoint.sessionID)
        stride = checkpoint.stride
        count = checkpoint.count
        head = checkpoint.head
        jumpLinks = checkpoint.jumpLinks
    }

    /// Links the next chunk; returns the new link.
    @discardableResult
    public mutating func append(_ chunkHash: Digest32) -> Digest32 {
        head = Self.link(chunkHash: chunkHash, previous: head)
        count += 1
        if count % stride == 0 { jumpLinks.append(Self.jump(boundaryLink: head, previous: jumpLinks.last ?? genesis)) }
        return head
    }

    /// The state to persist for a resume.
    public var checkpoint: ChainCheckpoint {
        ChainCheckpoint(validSessionID: sessionID, stride: stride, count: count, head: head, jumpLinks: jumpLinks)
    }

    /// `SHA-256("Aether3D_CC_GENESIS_" || sessionID as UTF-8)`.
    public static func genesis(sessionID: String) -> Digest32 {
        var hasher = SHA256()
        hasher.update(genesisPrefix)
        hasher.update(Array(sessionID.utf8))
        return hasher.finalize()
    }

    /// `SHA-256("CCv1\0" || chunkHash || previous)`, hashed from a stack buffer.
    public static func link(chunkHash: Digest32, previous: Digest32) -> Digest32 {
        unsafe withUnsafeTemporaryAllocation(byteCount: 69, alignment: 8) { buffer in
            // "CCv1" then NUL: the bytes of `linkDomain`, written as constants on the hot path.
            unsafe buffer.storeBytes(of: UInt32(0x3176_4343).littleEndian, toByteOffset: 0, as: UInt32.self)
            unsafe buffer.storeBytes(of: UInt8(0), toByteOffset: 4, as: UInt8.self)
            unsafe buffer.storeBytes(of: chunkHash, toByteOffset: 5, as: Digest32.self)
            unsafe buffer.storeBytes(of: previous, toByteOffset: 37, as: Digest32.self)
            return unsafe MerkleHash.hash(UnsafeRawBufferPointer(buffer))
        }
    }

    /// `SHA-256("CCJv1\0" || boundaryLink || previous)`.
    public static func jump(boundaryLink: Digest32, previous: Digest32) -> Digest32 {
        var hasher = SHA256()
        hasher.update(jumpDomain)
        hasher.update(boundaryLink)
        hasher.update(previous)
        return hasher.finalize()
    }

    /// `ceil(sqrt(n))`, at least 1, computed exactly in integers.
    public static func stride(forChunkCount n: Int) -> Int {
        guard n > 1 else { return 1 }
        var root = Int(Double(n).squareRoot())
        while root * root < n { root += 1 }
        while root > 1 && (root - 1) * (root - 1) >= n { root -= 1 }
        return root
    }
}
