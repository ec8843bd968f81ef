import AetherIO
import Foundation
import Glibc

@testable import AetherUploader

/// A fresh directory under the system temporary directory, removed at the end.
final class StateScratch {
    let root: String

    init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("aether-uplib-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// `root/<relative>`.
    func path(_ relative: String) -> String { root + "/" + relative }

    /// Permission bits of a path (not following a link).
    func mode(_ path: String) -> UInt32 {
        var status = stat()
        guard unsafe lstat(path, &status) == 0 else { return 0xffff_ffff }
        return UInt32(status.st_mode) & 0o7777
    }

    /// The file type bits of a path (not following a link), `S_IFMT` masked.
    func kind(_ path: String) -> UInt32 {
        var status = stat()
        guard unsafe lstat(path, &status) == 0 else { return 0 }
        return UInt32(status.st_mode & S_IFMT)
    }

    /// chmod(2).
    func setMode(_ path: String, _ mode: UInt32) { _ = unsafe chmod(path, mode_t(mode)) }

    /// mkfifo(3); true on success.
    func makeFIFO(_ path: String) -> Bool { unsafe mkfifo(path, 0o600) == 0 }

    /// mkdir(2) with `mode` exactly; true on success.
    func makeDirectory(_ path: String, mode: UInt32) -> Bool {
        guard unsafe mkdir(path, 0o700) == 0 else { return false }
        setMode(path, mode)
        return true
    }

    /// chown(2); false when refused (not root).
    func setOwner(_ path: String, _ uid: UInt32) -> Bool { unsafe chown(path, uid, uid) == 0 }

    /// The file's bytes.
    func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// Writes raw bytes (mode 0600) over `path`, as an attacker or a bad disk would.
    func overwrite(_ path: String, with bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        setMode(path, 0o600)
    }

    /// A state directory (and a vault) under this scratch.
    func stateDirectory(_ name: String = "state") throws -> UploadStateDirectory {
        try UploadStateDirectory(path: FilePath(path(name)))
    }
}
