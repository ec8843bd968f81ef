/// The content whose possession is proven: random access to its bytes. The prover reads its local file,
/// the verifier the stored copy; neither ever sends the bytes.
public protocol PossessionSource: Sendable {
    /// Length in bytes.
    var size: UInt64 { get }
    /// Exactly `count` bytes at `offset`; a short read or an I/O error throws.
    func read(offset: UInt64, count: Int) throws(SecurityError) -> [UInt8]
}

/// Content held in memory.
public struct InMemoryPossessionSource: PossessionSource {
    private let bytes: [UInt8]

    /// Wraps `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Length in bytes.
    public var size: UInt64 { UInt64(bytes.count) }

    /// A copy of `count` bytes at `offset`.
    public func read(offset: UInt64, count: Int) throws(SecurityError) -> [UInt8] {
        guard count >= 0, offset <= size, UInt64(count) <= size - offset else {
            throw SecurityError(.malformedMessage, "read of \(count) bytes at \(offset) is outside \(size) bytes")
        }
        let start = Int(offset)
        return Array(bytes[start..<start + count])
    }
}
