import AetherIO
import Foundation
import Testing

/// `FileDigester` against Python's hashlib and the PyPI `crc32c` package on real files.
@Suite struct FileDigestInteropTests {
    static let chunkSize = 1 << 20

    /// The peer's lines for `paths`: whole-file line then chunk lines, per path.
    func reference(_ paths: [String], chunkSize: Int) throws -> [String] {
        let output = try PythonPeer.run("file_digests.py", [String(chunkSize)] + paths)
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func ours(_ path: String, chunkSize: Int) throws -> [String] {
        let (file, chunks) = try FileDigester.digest(path: path, options: ChunkReadOptions(chunkSize: chunkSize))
        return ["\(file.sha256.hex) \(file.crc32cHex)"]
            + chunks.map { "chunk \($0.index) \($0.sha256.hex) \($0.crc32cHex)" }
    }

    @Test func filesOfAwkwardSizesMatchHashlibAndCRC32C() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aether-interop-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sizes = [0, 1, Self.chunkSize - 1, Self.chunkSize, Self.chunkSize + 1, 3 * Self.chunkSize + 4097]
        var paths: [String] = []
        var expectedLines: [String] = []
        for size in sizes {
            let path = directory.appendingPathComponent("f\(size)").path
            try Data(SecureRandom.bytes(size)).write(to: URL(fileURLWithPath: path))
            paths.append(path)
            expectedLines += try ours(path, chunkSize: Self.chunkSize)
        }
        let lines = try reference(paths, chunkSize: Self.chunkSize)
        #expect(lines.count == expectedLines.count)
        #expect(lines == expectedLines)
    }

    @Test func aSeveralGiBSparseFileMatchesHashlib() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aether-interop-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sparse").path
        // 3 GiB + 12,345 bytes: past 2^31 and 2^32 - 1 offsets, mostly holes, with random data in
        // a few places so a reader that skipped or misplaced a block would be caught.
        let size: UInt64 = (3 << 30) + 12_345
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        for offset: UInt64 in [0, (1 << 30) + 7, (2 << 30) - 3, (1 << 32) - 100, size - 5000] {
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: Data(SecureRandom.bytes(4096)))
        }
        try handle.truncate(atOffset: size)
        try handle.close()
        let chunkSize = 64 << 20
        let lines = try reference([path], chunkSize: chunkSize)
        let expected = try ours(path, chunkSize: chunkSize)
        #expect(expected.count == 1 + 49)
        #expect(lines == expected)
    }
}
