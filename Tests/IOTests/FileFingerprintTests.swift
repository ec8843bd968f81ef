import Testing

@testable import AetherIO

@Suite struct FileFingerprintTests {
    @Test func theFingerprintChangesWhenTheFileChanges() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let content = TemporaryFiles.randomBytes(10_000)
        let path = try files.write("f", content)
        let first = try FileFingerprint(path: path)
        #expect(first.size == 10_000)
        #expect(first.headSHA256 == SHA256.hash(content.prefix(4096)))
        #expect(try FileFingerprint(path: path) == first)

        try files.append([1], to: path)
        let appended = try FileFingerprint(path: path)
        #expect(appended != first)
        #expect(appended.size == 10_001)

        // Same size, different first byte, mtime forced back: only the head digest can tell.
        var changed = content
        changed[0] ^= 0xFF
        try files.write("f", changed)
        #expect(files.setModificationTime(path, nanoseconds: first.modificationNanoseconds))
        let rewritten = try FileFingerprint(path: path)
        #expect(rewritten.modificationNanoseconds == first.modificationNanoseconds)
        #expect(rewritten.headSHA256 != first.headSHA256)
        #expect(rewritten != first)
    }
}
