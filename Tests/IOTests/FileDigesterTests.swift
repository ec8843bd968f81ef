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
