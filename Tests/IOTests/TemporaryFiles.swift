import Foundation

@testable import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under the system temp dir, removed by `remove()`; files for one test.
struct TemporaryFiles {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-io-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Writes `bytes` to `name` and returns its path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Appends `bytes` to the file at `path`.
    func append(_ bytes: [UInt8], to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(bytes))
        try handle.close()
    }

    /// Truncates the file at `path` to `size` bytes.
    func truncate(_ path: String, to size: UInt64) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: size)
        try handle.close()
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// `count` random bytes.
    static func randomBytes(_ count: Int) -> [UInt8] { SecureRandom.bytes(count) }
}

/// Reads every chunk of `reader`, returning the bytes in order and the chunks' (offset, count).
func readAll(_ reader: FileChunkReader) throws -> (bytes: [UInt8], layout: [(Int64, Int)]) {
    var bytes: [UInt8] = []
    var layout: [(Int64, Int)] = []
    while let chunk = try reader.next() {
        bytes += chunk.bytes
        layout.append((chunk.offset, chunk.count))
    }
    return (bytes, layout)
}

extension TemporaryFiles {
    /// Sets the file's access and modification times to `nanoseconds` since the epoch.
    func setModificationTime(_ path: String, nanoseconds: Int64) -> Bool {
        var time = Glibc.timespec()
        time.tv_sec = Int(nanoseconds / 1_000_000_000)
        time.tv_nsec = Int(nanoseconds % 1_000_000_000)
        var times = [time, time]
        return unsafe utimensat(AT_FDCWD, path, &times, 0) == 0
    }
}
