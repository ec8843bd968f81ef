import AetherTransport

/// One staged piece of a stream in an `S3BlobStore`: the bytes one writer committed at one offset, stored as
/// `PREFIX/pieces/<upload>/<start>-<length>-<a|r>-<time>-<nonce>`. `a` pieces are IETF/tus appends, `r` pieces native
/// chunk regions; `time` is the writer's wall clock in nanoseconds (hex) and `nonce` random, so two writers of the
/// same region never share a key.
struct S3BlobPiece: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case append
        case region
    }

    let key: String
    let start: Int64
    let length: Int64
    let kind: Kind
    /// S3's `LastModified`, then the writer's clock and nonce from the key: the order pieces were committed in.
    let order: String

    var end: Int64 { start + length }

    /// The name of a new piece (relative to the upload's piece folder).
    static func name(start: Int64, length: Int64, kind: Kind, time: UInt64, nonce: String) -> String {
        let digits = String(start)
        let padded = String(repeating: "0", count: max(0, 20 - digits.count)) + digits
        let clock = String(time, radix: 16)
        let stamp = String(repeating: "0", count: max(0, 16 - clock.count)) + clock
        return "\(padded)-\(length)-\(kind == .append ? "a" : "r")-\(stamp)-\(nonce)"
    }

    /// The piece a listed object names, nil for anything else under the folder.
    init?(listed: S3ObjectClient.Listed, folder: String) {
        guard listed.key.hasPrefix(folder) else { return nil }
        let fields = listed.key.dropFirst(folder.count).split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count == 5, let start = Int64(fields[0]), start >= 0, let length = Int64(fields[1]),
            length >= 0, length == listed.size, fields[2] == "a" || fields[2] == "r", fields[3].count == 16
        else { return nil }
        key = listed.key
        self.start = start
        self.length = length
        kind = fields[2] == "a" ? .append : .region
        order = listed.lastModified + "|" + fields[3] + "|" + fields[4]
    }

    /// A region or append piece one of this store's writers just committed, before any listing shows it: its order
    /// sorts after every listed piece's (S3's `LastModified` is not known to the writer).
    init(own key: String, start: Int64, length: Int64, kind: Kind) {
        self.key = key
        self.start = start
        self.length = length
        self.kind = kind
        order = "~" + key
    }

    /// Whether this store's writer recorded it (`init(own:...)`) rather than a listing.
    var isOwn: Bool { order.hasPrefix("~") }

    /// A run of a stream's bytes served by one piece.
    struct Segment: Sendable, Hashable {
        let start: Int64
        let end: Int64
        let piece: S3BlobPiece

        /// Where `start` lies in the piece.
        var offsetInPiece: Int64 { start - piece.start }
    }

    /// The stream the pieces make, as non-overlapping segments in order, and its length.
    ///
    /// Append pieces are applied in commit order, each cutting the stream at its start and then extending it (what
    /// an append at an offset does), so a later append at an earlier offset (bytes never acknowledged cut away, a
    /// recovery cut) wins without deleting anything; a piece that starts past the end (left by a writer that lost)
    /// is skipped. Region pieces keep their place; of two at one offset (two writers of one chunk) the later wins.
    /// The regions between them are gaps (zeros, never read: no receipt covers them).
    static func layout(_ pieces: [S3BlobPiece]) -> (segments: [Segment], end: Int64) {
        let ordered = pieces.sorted { ($0.order, $0.start) < ($1.order, $1.start) }
        if ordered.contains(where: { $0.kind == .append }) {
            var segments: [Segment] = []
            var end: Int64 = 0
            for piece in ordered where piece.kind == .append && piece.start <= end {
                while let last = segments.last, last.end > piece.start {
                    segments.removeLast()
                    if last.start < piece.start {
                        segments.append(Segment(start: last.start, end: piece.start, piece: last.piece))
                    }
                }
                if piece.length > 0 { segments.append(Segment(start: piece.start, end: piece.end, piece: piece)) }
                end = piece.end
            }
            return (segments, end)
        }
        var newest: [Int64: S3BlobPiece] = [:]
        for piece in ordered { newest[piece.start] = piece }
        let starts = newest.keys.sorted()
        var segments: [Segment] = []
        var end: Int64 = 0
        for (position, start) in starts.enumerated() {
            guard let piece = newest[start] else { continue }
            end = max(end, piece.end)
            let stop = position + 1 < starts.count ? min(piece.end, starts[position + 1]) : piece.end
            if stop > start { segments.append(Segment(start: start, end: stop, piece: piece)) }
        }
        return (segments, end)
    }
}
