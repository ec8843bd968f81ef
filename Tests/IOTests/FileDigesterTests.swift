import Testing

@testable import AetherIO

@Suite struct FileDigesterTests {
    static let chunk = 64 << 10
    static let sizes = [0, 1, chunk - 1, chunk, chunk + 1, 7 * chunk + 999]

    @Test(arguments: sizes) func digestsMatchOneShotHashesOfTheContent(size: Int) throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let content = TemporaryFiles.randomBytes(size)
        let path = try files.write("f", content)
        for parallel in [true, false] {
            let (file, chunks) = try FileDigester.digest(
                path: path, options: ChunkReadOptions(chunkSize: Self.chunk), parallel: parallel)
            #expect(file.sha256 == SHA256.hash(content))
            #expect(file.crc32c == CRC32C.checksum(content))
            #expect(file.chunkCount == chunks.count)
            #expect(chunks.count == (size + Self.chunk - 1) / Self.chunk)
            for (index, digest) in chunks.enumerated() {
                let start = index * Self.chunk
                let part = Array(content[start..<min(start + Self.chunk, size)])
                #expect(digest.index == index)
                #expect(digest.offset == Int64(start))
                #expect(digest.length == part.count)
                #expect(digest.sha256 == SHA256.hash(part))
                #expect(digest.crc32c == CRC32C.checksum(part))
            }
            #expect(file.fingerprint.size == Int64(size))
            #expect(file.fingerprint.headSHA256 == SHA256.hash(content.prefix(4096)))
        }
    }

    @Test(arguments: ReadStrategy.allCases) func everyStrategyGivesTheSameDigests(strategy: ReadStrategy) throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let content = TemporaryFiles.randomBytes(3 * (1 << 20) + 17)
        let path = try files.write("f", content)
        let (file, chunks) = try FileDigester.digest(
            path: path, options: ChunkReadOptions(chunkSize: 1 << 20, strategy: strategy))
        #expect(file.strategy == strategy)
        #expect(file.sha256 == SHA256.hash(content))
        #expect(
            chunks.map(\.crc32c)
                == (0..<4).map { CRC32C.checksum(content[($0 << 20)..<min(($0 + 1) << 20, content.count)]) })
    }

    @Test func theStreamHandsOutEachChunksBytesWithItsDigestInOrder() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let content = TemporaryFiles.randomBytes(10 * 4096 + 5)
        let path = try files.write("f", content)
        let stream = try FileDigestStream(path: path, options: ChunkReadOptions(chunkSize: 4096))
        var rebuilt: [UInt8] = []
        var expectedIndex = 0
        while let (chunk, digest) = try stream.next() {
            #expect(chunk.index == expectedIndex)
            #expect(digest.index == expectedIndex)
            #expect(SHA256.hash(chunk.bytes) == digest.sha256)
            rebuilt += chunk.bytes
            expectedIndex += 1
        }
        #expect(rebuilt == content)
        #expect(try stream.finish().sha256 == SHA256.hash(content))
    }

    @Test func finishingBeforeTheLastChunkIsAnError() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("f", TemporaryFiles.randomBytes(3 * 4096))
        let stream = try FileDigestStream(path: path, options: ChunkReadOptions(chunkSize: 4096))
        _ = try stream.next()
        let error = #expect(throws: IOError.self) { try stream.finish() }
        #expect(error?.code == .invalidArgument)
    }

    @Test func abandoningAStreamMidwayReleasesItsWorker() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("f", TemporaryFiles.randomBytes(40 * 4096))
        for _ in 0..<20 {
            let stream = try FileDigestStream(path: path, options: ChunkReadOptions(chunkSize: 4096))
            _ = try stream.next()
            _ = try stream.next()
        }
        // Twenty abandoned streams must not have left the file locked or the process stuck.
        #expect(try FileDigester.digest(path: path).file.chunkCount == 1)
    }

    @Test func aFileChangingDuringADigestIsAnErrorNotADigest() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("f", TemporaryFiles.randomBytes(16 * 4096))
        var seen = 0
        let error = #expect(throws: IOError.self) {
            _ = try FileDigester.digest(path: path, options: ChunkReadOptions(chunkSize: 4096)) { _, _ in
                seen += 1
                if seen == 2 { try files.append([0], to: path) }
            }
        }
        #expect(error?.code == .fileChanged)
    }

    @Test func compressibilityTellsZerosFromRandomBytes() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let zeros = try files.write("zeros", [UInt8](repeating: 0, count: 256 << 10))
        let random = try files.write("random", TemporaryFiles.randomBytes(256 << 10))
        let zeroDigest = try FileDigester.digest(path: zeros).file
        let randomDigest = try FileDigester.digest(path: random).file
        #expect(zeroDigest.compressibility > 0.9)
        #expect(randomDigest.compressibility < 0.05)
    }
}

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

@Suite struct DomainTagTests {
    @Test func everyConstantTagIsValidAndDistinct() {
        #expect(DomainTag.allConstants.allSatisfy { DomainTag.isValid($0.bytes) })
        #expect(Set(DomainTag.allConstants).count == DomainTag.allConstants.count)
    }

    @Test(arguments: ["", "naïve", "tag\u{0}", "tab\tbed", "emoji🙂", String(repeating: "a", count: 256)])
    func aRuntimeTagThatIsEmptyOrNotPrintableASCIIThrows(text: String) {
        let error = #expect(throws: IOError.self) { try DomainTag(validating: text) }
        #expect(error?.code == .invalidDomainTag)
    }

    @Test func aValidRuntimeTagEqualsTheSameConstant() throws {
        #expect(try DomainTag(validating: "aether/merkle-leaf/v1") == DomainTag.merkleLeaf)
    }

    @Test func differentTagsSeparateTheSameMessage() {
        let message: [UInt8] = [1, 2, 3]
        #expect(DomainTag.merkleLeaf.hash(message) != DomainTag.merkleNode.hash(message))
        // Length-prefixed: "ab" + "c..." cannot collide with "a" + "bc...".
        let ab = DomainTag(constant: "ab")
        let a = DomainTag(constant: "a")
        #expect(ab.hash(Array("c".utf8)) != a.hash(Array("bc".utf8)))
        #expect(DomainTag.merkleLeaf.hash(message) == SHA256.hash([21] + Array("aether/merkle-leaf/v1".utf8) + message))
    }
}
