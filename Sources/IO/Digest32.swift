/// A 32-byte digest (SHA-256 or HMAC-SHA-256 output), stored inline with no allocation.
///
/// `==` is constant time: digests guard commitments and proofs, and a timing oracle on them
/// would let an attacker forge one byte at a time.
public struct Digest32: Sendable, Hashable, CustomStringConvertible {
    private var w0: UInt64
    private var w1: UInt64
    private var w2: UInt64
    private var w3: UInt64

    /// The all-zero digest.
    public static let zero = Digest32(w0: 0, w1: 0, w2: 0, w3: 0)

    private init(w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64) {
        self.w0 = w0
        self.w1 = w1
        self.w2 = w2
        self.w3 = w3
    }

    /// Creates a digest from exactly 32 bytes.
    public init(bytes: some Collection<UInt8>) throws(IOError) {
        guard bytes.count == 32 else {
            throw IOError(.invalidArgument, "a digest is 32 bytes, got \(bytes.count)")
        }
        self = .zero
        unsafe withUnsafeMutableBytes { raw in
            for (offset, byte) in bytes.enumerated() { unsafe raw[offset] = byte }
        }
    }

    /// Parses 64 lowercase or uppercase hex digits. A parse failure is an error, never "not equal" (BUG-18).
    public init(hex: some StringProtocol) throws(IOError) {
        let bytes = try Hex.decode(hex)
        try self.init(bytes: bytes)
    }

    /// The 32 bytes.
    public var bytes: [UInt8] { unsafe withUnsafeBytes { unsafe Array($0) } }

    /// 64 lowercase hex digits.
    public var hex: String { unsafe withUnsafeBytes { unsafe Hex.encode($0) } }

    public var description: String { hex }

    /// Calls `body` with the digest's 32 bytes.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var copy = self
        return try unsafe Swift.withUnsafeBytes(of: &copy) { (raw) throws(E) -> R in try unsafe body(raw) }
    }

    /// Calls `body` with the digest's 32 bytes, writable.
    public mutating func withUnsafeMutableBytes<R, E: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try unsafe Swift.withUnsafeMutableBytes(of: &self) { (raw) throws(E) -> R in try unsafe body(raw) }
    }

    /// Constant-time equality.
    public static func == (lhs: Digest32, rhs: Digest32) -> Bool {
        ((lhs.w0 ^ rhs.w0) | (lhs.w1 ^ rhs.w1) | (lhs.w2 ^ rhs.w2) | (lhs.w3 ^ rhs.w3)) == 0
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(w0)
        hasher.combine(w1)
        hasher.combine(w2)
        hasher.combine(w3)
    }
}
