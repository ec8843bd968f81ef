public import AetherIO

/// The key of one upload's resume snapshot: derived from the file's canonical path bytes and the destination, so
/// the same `aether upload FILE DEST` finds its earlier attempt. Also the upload id the command line shows.
public enum SnapshotKey {
    static let domain: [UInt8] = Array("aether-upload-snapshot-v1\0".utf8)

    /// 32 hex characters: the first 16 bytes of SHA-256(domain, path bytes, NUL, destination).
    public static func derive(canonicalPath: FilePath, destination: String) -> String {
        var hash = SHA256()
        hash.update(domain)
        hash.update(canonicalPath.bytes)
        hash.update([0])
        hash.update(Array(destination.utf8))
        return String(hash.finalize().hex.prefix(32))
    }
}
