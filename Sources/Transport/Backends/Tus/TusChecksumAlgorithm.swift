import AetherIO

/// A tus checksum extension algorithm the client can compute (`Upload-Checksum: <name> <base64>`).
public enum TusChecksumAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// SHA-1, the one every tus checksum server must offer.
    case sha1
    /// CRC-32 (ISO-HDLC, zlib's), its 4 bytes big-endian.
    case crc32

    /// The capability kind it is reported as.
    var kind: BackendCapabilities.ChecksumKind {
        switch self {
        case .sha1: .sha1
        case .crc32: .crc32
        }
    }

    /// The digest bytes of a body held in memory; nil for a stream, which cannot be read twice.
    func digest(of body: HTTPRequestBody) -> [UInt8]? {
        guard case .pieces(let pieces, _) = body.storage else {
            if body.isEmpty { return digest(of: [HTTPBodyPiece]()) }
            return nil
        }
        return digest(of: pieces)
    }

    private func digest(of pieces: [HTTPBodyPiece]) -> [UInt8] {
        switch self {
        case .sha1:
            var hasher = SHA1()
            for piece in pieces {
                switch piece {
                case .bytes(let bytes): hasher.update(bytes)
                case .chunk(let chunk): hasher.update(chunk)
                }
            }
            return hasher.finalize()
        case .crc32:
            var crc = CRC32()
            for piece in pieces {
                switch piece {
                case .bytes(let bytes): crc.update(bytes)
                case .chunk(let chunk): crc.update(chunk)
                }
            }
            let value = crc.value
            return [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
    }
}
