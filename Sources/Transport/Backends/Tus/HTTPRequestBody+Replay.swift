import AetherIO

/// Re-sending part of a body after a tus 409 told the client where the server stands.
extension HTTPRequestBody {
    /// The body without its first `count` bytes, for a body held in memory (bytes or chunks; a chunk cut in the
    /// middle has its tail copied). nil for a stream, which cannot be read again.
    func dropping(first count: Int64) -> HTTPRequestBody? {
        switch storage {
        case .none: return count == 0 ? self : nil
        case .stream: return nil
        case .pieces(let pieces, let length):
            guard count >= 0, count <= length else { return nil }
            var skip = count
            var kept: [HTTPBodyPiece] = []
            for piece in pieces {
                let size = Int64(piece.count)
                if skip >= size {
                    skip -= size
                    continue
                }
                if skip == 0 {
                    kept.append(piece)
                    continue
                }
                switch piece {
                case .bytes(let bytes): kept.append(.bytes(Array(bytes[Int(skip)...])))
                case .chunk(let chunk): kept.append(.bytes(Array(chunk.bytes[Int(skip)...])))
                }
                skip = 0
            }
            return HTTPRequestBody(storage: .pieces(kept, length: length - count))
        }
    }
}
