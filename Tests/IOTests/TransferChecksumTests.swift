import Testing

@testable import AetherIO

/// SHA-1 and CRC-32 (zlib), the checksums tus servers name in `Tus-Checksum-Algorithm`.
@Suite struct TransferChecksumTests {
    // FIPS 180-4 example "abc", the empty message, and the tus 1.0.0 checksum example (protocol.md, "Checksum").
    @Test(arguments: [
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("hello world", "2aae6c35c94fcfb415dbe95f408b9ce91ee846ed"),
    ])
    func sha1MatchesTheStandardVectors(message: String, hex: String) {
        #expect(Hex.encode(SHA1.hash(Array(message.utf8))) == hex)
    }

    @Test func sha1StreamsAcrossUpdatesAndKeepsGoingAfterFinalize() {
        var hasher = SHA1()
        hasher.update(Array("hello ".utf8))
        let early = hasher.finalize()
        hasher.update(Array("world".utf8))
        #expect(Hex.encode(early) == Hex.encode(SHA1.hash(Array("hello ".utf8))))
        #expect(Hex.encode(hasher.finalize()) == "2aae6c35c94fcfb415dbe95f408b9ce91ee846ed")
    }

    // The CRC-32/ISO-HDLC check value over "123456789" (Williams' catalogue) and the empty message.
    @Test func crc32MatchesTheCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        #expect(CRC32.checksum(Array("hello world".utf8)) == 0x0D4A_1185)
    }

    @Test func crc32StreamsAcrossUpdates() {
        var crc = CRC32()
        crc.update(Array("1234".utf8))
        crc.update(Array("56789".utf8))
        #expect(crc.value == 0xCBF4_3926)
        #expect(CRC32.checksum(Array("123456789".utf8)) != CRC32C.checksum(Array("123456789".utf8)))
    }

    @Test func bothHashAChunkWhereItLies() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let content = TemporaryFiles.randomBytes(100_000)
        let path = try files.write("f", content)
        let reader = try FileChunkReader(path: path, options: ChunkReadOptions(chunkSize: 32 << 10, strategy: .pread))
        var sha1 = SHA1()
        var crc = CRC32()
        while let chunk = try reader.next() {
            sha1.update(chunk)
            crc.update(chunk)
        }
        #expect(sha1.finalize() == SHA1.hash(content))
        #expect(crc.value == CRC32.checksum(content))
    }
}
