import AetherIO
import Foundation
import Testing

@testable import AetherIntegrity

/// A file of random bytes and its chunk digests, made in memory.
struct SampleFile {
    let bytes: [UInt8]
    let chunkSize: Int

    init(size: Int, chunkSize: Int, seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        self.chunkSize = chunkSize
    }

    var chunks: [ManifestChunk] {
        stride(from: 0, to: bytes.count, by: chunkSize).map { start in
            let slice = Array(bytes[start..<min(start + chunkSize, bytes.count)])
            return ManifestChunk(length: slice.count, sha256: SHA256.hash(slice), crc32c: CRC32C.checksum(slice))
        }
    }

    func manifest(session: String = "session-1") throws -> VerifiedManifest {
        var builder = try ManifestBuilder(fileSize: UInt64(bytes.count), chunkSize: chunkSize, sessionID: session)
        for chunk in chunks { try builder.append(chunk) }
        return try builder.finish(fileSHA256: SHA256.hash(bytes))
    }
}

@Suite struct ManifestTests {
    private func code(_ data: Data) -> IntegrityError.Code? {
        do { _ = try VerifiedManifest.parse(data) } catch { return error.code }
        return nil
    }

    private func json(_ manifest: VerifiedManifest) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: manifest.canonicalJSON()) as? [String: Any] ?? [:]
    }

    private func data(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    @Test(arguments: [(0, 16), (1, 16), (16, 16), (17, 16), (1000, 64), (4096, 100)])
    func aBuiltManifestRoundTripsThroughCanonicalJSON(_ size: Int, _ chunkSize: Int) throws {
        let file = SampleFile(size: size, chunkSize: chunkSize, seed: UInt64(size))
        let manifest = try file.manifest()
        let data = try manifest.canonicalJSON()
        let parsed = try VerifiedManifest.parse(data)
        #expect(parsed == manifest)
        #expect(try parsed.canonicalJSON() == data)
        #expect(parsed.cid.string == CIDv1(digest: SHA256.hash(file.bytes)).string)
        #expect(parsed.merkleRoot == (try MerkleProofBuilder(chunkHashes: file.chunks.map(\.sha256))).root)
        #expect(parsed.verify(chunks: file.chunks, fileSHA256: SHA256.hash(file.bytes)) == .intact)
    }

    @Test func canonicalJSONHasSortedKeysAndNoWhitespace() throws {
        let text = String(
            decoding: try SampleFile(size: 40, chunkSize: 16, seed: 1).manifest().canonicalJSON(), as: UTF8.self)
        #expect(text.hasPrefix(#"{"chainHead":""#))
        #expect(!text.contains(" ") && !text.contains("\n"))
        let order = [
            "chainHead", "chainSessionID", "chunkSize", "chunking", "chunks", "cid", "fileSHA256", "fileSize",
            "formatVersion", "merkleRoot",
        ].compactMap { text.range(of: "\"\($0)\"")?.lowerBound }
        #expect(order.count == 10 && order == order.sorted())
        #expect(text.contains(#"{"crc32c":""#))
    }

    @Test func tooSmallAndMalformedManifestsAreTypedErrors() throws {
        #expect(code(Data()) == .malformedManifest)
        #expect(code(Data("{}".utf8)) == .malformedManifest)
        #expect(code(Data(repeating: 0x7B, count: 100)) == .malformedManifest)
        var object = try json(SampleFile(size: 40, chunkSize: 16, seed: 1).manifest())
        object["extra"] = 1
        #expect(code(try data(object)) == .malformedManifest)
    }

    @Test func inconsistentManifestsAreRejected() throws {
        let base = try json(SampleFile(size: 40, chunkSize: 16, seed: 1).manifest())
        var chunks = base["chunks"] as? [[String: Any]] ?? []
        func with(_ key: String, _ value: Any) throws -> Data {
            var copy = base
            copy[key] = value
            return try data(copy)
        }
        #expect(code(try with("fileSize", 41)) == .malformedManifest)  // last chunk length no longer fits
        #expect(code(try with("fileSize", 60)) == .malformedManifest)  // count vs size
        #expect(code(try with("chunkSize", 20)) == .malformedManifest)
        #expect(code(try with("chunkSize", 0)) == .malformedManifest)
        #expect(code(try with("chunks", Array(chunks.dropLast()))) == .malformedManifest)
        #expect(code(try with("formatVersion", 2)) == .unsupported)
        #expect(code(try with("chunking", "fastcdc")) == .unsupported)
        #expect(code(try with("chainSessionID", "session-2")) == .digestMismatch)
        #expect(code(try with("merkleRoot", IntegrityVectors.chunkHash(0).hex)) == .digestMismatch)
        #expect(code(try with("cid", CIDv1(digest: IntegrityVectors.chunkHash(0)).string)) == .digestMismatch)
        #expect(code(try with("fileSHA256", (base["fileSHA256"] as? String ?? "").uppercased())) == .malformedManifest)
        chunks[1]["sha256"] = IntegrityVectors.chunkHash(0).hex
        #expect(code(try with("chunks", chunks)) == .digestMismatch)  // root no longer matches the chunk hashes
        chunks[1]["crc32c"] = "123"
        #expect(code(try with("chunks", chunks)) == .malformedManifest)
    }

    @Test func verificationNamesTheFirstBadChunk() throws {
        let file = SampleFile(size: 100, chunkSize: 16, seed: 2)  // 7 chunks, the last 4 bytes
        let manifest = try file.manifest()
        var chunks = file.chunks
        chunks[3] = ManifestChunk(length: 16, sha256: IntegrityVectors.chunkHash(0), crc32c: chunks[3].crc32c)
        chunks[5] = ManifestChunk(length: 16, sha256: chunks[5].sha256, crc32c: 0)
        #expect(manifest.verify(chunks: chunks) == .badChunk(index: 3, reason: .sha256))
        #expect(manifest.verify(chunks: Array(chunks[4...])) == .badChunk(index: 0, reason: .sha256))
        let good = file.chunks
        var crcOnly = good
        crcOnly[5] = ManifestChunk(length: 16, sha256: good[5].sha256, crc32c: good[5].crc32c ^ 1)
        #expect(manifest.verify(chunks: crcOnly) == .badChunk(index: 5, reason: .crc32c))
        var short = good
        short[6] = ManifestChunk(length: 3, sha256: good[6].sha256, crc32c: good[6].crc32c)
        #expect(manifest.verify(chunks: short) == .badChunk(index: 6, reason: .length(expected: 4, actual: 3)))
        #expect(manifest.verify(chunks: good.dropLast(2)) == .badChunk(index: 5, reason: .missing))
        #expect(manifest.verify(chunks: good + [good[0]]) == .badChunk(index: 7, reason: .unexpected))
        #expect(manifest.verify(chunks: good, fileSHA256: IntegrityVectors.chunkHash(1)) == .fileDigestMismatch)
        #expect(manifest.verify(chunks: good, fileSHA256: SHA256.hash(file.bytes)) == .intact)
    }

    @Test func theStreamingVerifierHandsOutVerifiedChunksAndNeverRecovers() throws {
        let file = SampleFile(size: 50, chunkSize: 16, seed: 4)
        var verifier = try file.manifest().verifier()
        let chunks = file.chunks
        guard case .verified(let first) = verifier.check(chunks[0]) else {
            Issue.record("chunk 0 should verify")
            return
        }
        #expect(first.index == 0 && first.digest == chunks[0])
        #expect(verifier.check(chunks[2]) == .mismatch(index: 1, reason: .sha256))
        #expect(verifier.check(chunks[1]) == .mismatch(index: 1, reason: .unexpected))
        #expect(verifier.finish() != .intact)
    }

    @Test func theBuilderRefusesChunksThatDoNotFitTheFile() throws {
        let file = SampleFile(size: 40, chunkSize: 16, seed: 5)
        var builder = try ManifestBuilder(fileSize: 40, chunkSize: 16, sessionID: "s")
        #expect(throws: IntegrityError.self) { try builder.append(file.chunks[2]) }  // 8 bytes where 16 are due
        for chunk in file.chunks { try builder.append(chunk) }
        #expect(throws: IntegrityError.self) { try builder.append(file.chunks[2]) }
        let partial = try ManifestBuilder(fileSize: 40, chunkSize: 16, sessionID: "s")
        #expect(throws: IntegrityError.self) { try partial.finish(fileSHA256: .zero) }
        #expect(throws: IntegrityError.self) { try ManifestBuilder(fileSize: 40, chunkSize: 0, sessionID: "s") }
        #expect(throws: IntegrityError.self) { try ManifestBuilder(fileSize: 40, chunkSize: 16, sessionID: "") }
    }

    @Test func hexComparisonTellsParseErrorsFromInequality() {
        let a = IntegrityVectors.chunkHash(1).hex
        #expect(HexComparison.compare(a, a) == .equal)
        #expect(HexComparison.compare(a, a.uppercased()) == .equal)
        #expect(HexComparison.compare(a, IntegrityVectors.chunkHash(2).hex) == .notEqual)
        guard case .parseError = HexComparison.compare(a, "\u{FEFF}" + a) else {
            Issue.record("a BOM-prefixed string must be a parse error, not \"not equal\"")
            return
        }
        guard case .parseError = HexComparison.compare("abc", a) else {
            Issue.record("odd length must be a parse error")
            return
        }
    }
}
