/// A native upload's parity: `data` chunks per group and `parity` shards per group of the rs8 code
/// (`docs/ERASURE-CODING.md`). Group `g` holds chunks `g*data ..< g*data+data`; the last group may be short,
/// and its missing positions enter the code as all-zero shards.
public struct ParityLayout: Sendable, Hashable {
    /// Data shards per group (1...255).
    public let data: Int
    /// Parity shards per group (1...255, `data + parity <= 256`).
    public let parity: Int

    /// A layout; the ranges are checked by `UploadEngine.create`.
    public init(data: Int, parity: Int) {
        self.data = data
        self.parity = parity
    }

    /// Groups for `chunks` chunks.
    public func groupCount(chunks: Int) -> Int { chunks == 0 ? 0 : (chunks + data - 1) / data }
}
