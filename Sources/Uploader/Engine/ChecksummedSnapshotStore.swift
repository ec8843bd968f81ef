import AetherIO
import FoundationEssentials

/// Resume snapshots as files `KEY.snapshot` in one directory, each a magic line, the SHA-256 of the body and the
/// body, written atomically with mode 0600. A file that fails its checksum is `.snapshotDamaged` and is left as it
/// is for inspection (the uploader then removes it only to start a fresh upload under the same key).
///
/// This store checksums but does not encrypt: the snapshot holds digests, sizes and upload URLs, never file
/// contents or secrets. The key-store backed `SnapshotVault` adds AES-GCM; both speak `SnapshotStore`.
public struct ChecksummedSnapshotStore: SnapshotStore {
    static let magic: [UInt8] = Array("AETHER-SNAPSHOT-1\n".utf8)
    static let suffix = ".snapshot"
    static let maximumBytes = 64 << 20

    /// The directory holding the snapshots.
    public let directory: String

    /// A store in `directory`, created (mode 0700) when missing.
    public init(directory: String) throws(UploaderError) {
        self.directory = directory
        if FileManager.default.fileExists(atPath: directory) {
            let type = try? FileManager.default.attributesOfItem(atPath: directory)[.type] as? FileAttributeType
            guard type == .typeDirectory else {
                throw UploaderError(.snapshotUnavailable, "the state directory \(directory) is not a directory")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw UploaderError(.snapshotUnavailable, "the state directory \(directory) cannot be created")
        }
    }

    static func isValidKey(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.count <= 128
            && key.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D }
    }

    private func path(_ key: String) throws(UploaderError) -> String {
        guard Self.isValidKey(key) else {
            throw UploaderError(.invalidArgument, "an upload id is lower-case letters, digits and dashes")
        }
        return directory + "/" + key + Self.suffix
    }

    public func load(key: String) throws(UploaderError) -> [UInt8]? {
        let path = try path(key)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try GuardedFile(path: path).readAll(maximumBytes: Self.maximumBytes)
        } catch {
            throw UploaderError(.snapshotUnavailable, "the resume snapshot \(path) cannot be read: \(error.message)")
        }
        return try Self.open(bytes, path: path)
    }

    /// The body of a stored file, or `.snapshotDamaged` naming `path`.
    static func open(_ bytes: [UInt8], path: String) throws(UploaderError) -> [UInt8] {
        let headerCount = magic.count + 32
        guard bytes.count >= headerCount, Array(bytes[0..<magic.count]) == magic else {
            throw UploaderError(.snapshotDamaged, "the resume snapshot \(path) is damaged (no snapshot header)")
        }
        let body = Array(bytes[headerCount...])
        let stored = Array(bytes[magic.count..<headerCount])
        guard ConstantTime.equals(stored, SHA256.hash(body).bytes) else {
            throw UploaderError(.snapshotDamaged, "the resume snapshot \(path) is damaged (checksum mismatch)")
        }
        return body
    }

    /// The file bytes for `body`.
    static func seal(_ body: [UInt8]) -> [UInt8] { magic + SHA256.hash(body).bytes + body }

    public func save(_ bytes: [UInt8], key: String) throws(UploaderError) {
        let path = try path(key)
        do {
            try AtomicFile.write(Self.seal(bytes), to: path, options: .secret)
        } catch {
            throw UploaderError(.snapshotUnavailable, "the resume snapshot \(path) cannot be written: \(error.message)")
        }
    }

    public func remove(key: String) throws(UploaderError) {
        let path = try path(key)
        guard FileManager.default.fileExists(atPath: path) else { return }
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw UploaderError(.snapshotUnavailable, "the resume snapshot \(path) cannot be removed")
        }
    }

    public func keys() throws(UploaderError) -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw UploaderError(.snapshotUnavailable, "the state directory \(directory) cannot be listed")
        }
        return names.filter { $0.hasSuffix(Self.suffix) }.map { String($0.dropLast(Self.suffix.count)) }
            .filter(Self.isValidKey).sorted()
    }
}
