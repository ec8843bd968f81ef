/// How many consecutive parts one request carries (a run), and which. The part (the upload's unit: hashed,
/// acknowledged, resumed, Merkle-leafed) is fixed at creation; the request follows the link: k = the scheduler's
/// current chunk size / part size, at least 1, at most what the backend takes.
enum RunPlanner {
    /// The part size of a fresh upload over a backend that takes runs, off loopback: small enough for the slowest
    /// tier (1 MiB, never below the backend's minimum). Loopback keeps the large parts (nil: today's choice).
    static let unitBytes: Int64 = 1 << 20

    /// Parts per request for a decided chunk size: `chunkSizeBytes / partSize` rounded down, in 1...`maximum`.
    static func partsPerRequest(chunkSizeBytes: Int, partSize: Int64, maximum: Int) -> Int {
        guard partSize > 0 else { return 1 }
        return max(1, min(max(1, maximum), Int(Int64(max(0, chunkSizeBytes)) / partSize)))
    }

    /// The run that starts at part `first`: up to `length` consecutive parts below `partCount`, stopping before the
    /// first acknowledged one (a run never crosses a part the destination holds). Empty when `first` itself is
    /// acknowledged or past the end.
    static func run(from first: Int, length: Int, partCount: Int, isAcknowledged: (Int) -> Bool) -> Range<Int> {
        guard first >= 0, first < partCount, !isAcknowledged(first) else { return first..<first }
        var end = first + 1
        while end - first < length, end < partCount, !isAcknowledged(end) { end += 1 }
        return first..<end
    }
}
