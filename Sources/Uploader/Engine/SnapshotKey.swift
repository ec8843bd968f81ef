public import AetherIO

/// The key of one upload's resume snapshot: derived from the file's canonical path bytes and the destination, so
/// the same `aether upload FILE DEST` finds its earlier attempt. Also the upload id the command line shows.
public enum SnapshotKey {
    static let domain: [UInt8] = Array("aether-upload-snapshot-v1\0".utf8)

    /// 32 hex characters: the first 16 bytes of SHA-256(domain, path bytes, NUL, destination).
    public static func derive(canonicalPath: FilePath, destination: String) -> String {
        String(hex(domain, canonicalPath, destination).prefix(32))
    }

    /// A capture's id (`CaptureJob.key`): `c` and 31 hex characters of SHA-256 under a domain of its own, so it never
    /// equals a file's key.
    static func capture(canonicalPath: FilePath, destination: String) -> String {
        "c" + hex(Array("aether-capture-v1\0".utf8), canonicalPath, destination).prefix(31)
    }

    private static func hex(_ domain: [UInt8], _ path: FilePath, _ destination: String) -> String {
        var hash = SHA256()
        hash.update(domain)
        hash.update(path.bytes)
        hash.update([0])
        hash.update(Array(destination.utf8))
        return hash.finalize().hex
    }
}
