import AetherIO

/// The bytes of one snapshot file (format version 1; docs/UPLOADER.md):
///
/// ```
/// "ASNP"                     4 bytes, magic
/// version                    1 byte, 0x01
/// key length K               2 bytes, big-endian, 1...256
/// upload key                 K bytes, UTF-8
/// nonce                      12 bytes, random for every write
/// ciphertext || tag          AES-256-GCM of the snapshot bytes, 16-byte tag
/// ```
///
/// The associated data is the header (magic through upload key), so the version and the key are
/// authenticated; the AES key is the per-upload key `ResumeKeyDerivation.sessionKey(master, uploadKey)`.
/// The file is named `<lowercase hex SHA-256 of the upload key>.snapshot`.
enum SnapshotFormat {
    static let magic: [UInt8] = Array("ASNP".utf8)
    static let version: UInt8 = 1
    static let nonceByteCount = 12
    static let tagByteCount = 16
    static let maximumKeyByteCount = 256
    static let fileSuffix = ".snapshot"

    /// The header (also the associated data) for `key`.
    static func header(key: [UInt8]) -> [UInt8] {
        magic + [version, UInt8(key.count >> 8), UInt8(key.count & 0xff)] + key
    }

    /// The file name of `key`'s snapshot.
    static func fileName(key: [UInt8]) -> String { SHA256.hash(key).hex + fileSuffix }

    /// Whether `name` is a snapshot file name (64 lowercase hex digits and the suffix).
    static func isFileName(_ name: String) -> Bool {
        guard name.hasSuffix(fileSuffix) else { return false }
        let stem = name.utf8.dropLast(fileSuffix.utf8.count)
        return stem.count == 64 && stem.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// A parsed file: the key it names, where the header ends, and the nonce and sealed bytes.
    struct Parsed {
        var key: [UInt8]
        var headerByteCount: Int
        var nonce: ArraySlice<UInt8>
        var sealed: ArraySlice<UInt8>
    }

    /// What `parse` found.
    enum Outcome {
        case parsed(Parsed)
        case damaged(SnapshotDamage.Reason)
    }

    /// Parses the framing; the AEAD is checked by the caller.
    static func parse(_ bytes: [UInt8]) -> Outcome {
        guard bytes.count >= magic.count else { return .damaged(.truncated) }
        guard Array(bytes[0..<magic.count]) == magic else { return .damaged(.notASnapshot) }
        guard bytes.count > magic.count else { return .damaged(.truncated) }
        guard bytes[magic.count] == version else { return .damaged(.unsupportedVersion) }
        let lengthAt = magic.count + 1
        guard bytes.count >= lengthAt + 2 else { return .damaged(.truncated) }
        let keyCount = Int(bytes[lengthAt]) << 8 | Int(bytes[lengthAt + 1])
        guard (1...maximumKeyByteCount).contains(keyCount) else { return .damaged(.wrongKey) }
        let keyAt = lengthAt + 2
        let headerEnd = keyAt + keyCount
        guard bytes.count >= headerEnd + nonceByteCount + tagByteCount else { return .damaged(.truncated) }
        return .parsed(
            Parsed(
                key: Array(bytes[keyAt..<headerEnd]), headerByteCount: headerEnd,
                nonce: bytes[headerEnd..<(headerEnd + nonceByteCount)], sealed: bytes[(headerEnd + nonceByteCount)...]))
    }
}
