import Foundation

/// A throwaway directory tree for sysfs/procfs fakes; tests call `destroy()` in a `defer` (which also keeps the
/// tree alive until the test ends).
final class FakeTree {
    let root: String

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("aether-fake-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    /// Removes the whole tree.
    func destroy() { try? FileManager.default.removeItem(atPath: root) }

    /// Writes `contents` at `path` (relative to the root), creating parent directories.
    func write(_ path: String, _ contents: String) throws {
        let full = root + "/" + path
        let parent = (full as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        try contents.write(toFile: full, atomically: true, encoding: .utf8)
    }

    /// Creates a directory at `path`.
    func directory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: root + "/" + path, withIntermediateDirectories: true)
    }

    /// Removes `path`.
    func remove(_ path: String) throws { try FileManager.default.removeItem(atPath: root + "/" + path) }
}
