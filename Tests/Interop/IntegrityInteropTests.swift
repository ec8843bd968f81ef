import AetherIO
import AetherIntegrity
import Foundation
import Testing

@Suite struct IntegrityInteropTests {
    /// The checked-in vectors are exactly what the independent Python generator writes today.
    @Test func theVectorGeneratorReproducesTheCheckedInFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-vectors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try PythonPeer.run("gen_integrity_vectors.py", [directory.path])
        for name in ["merkle.json", "commitment_chain.json"] {
            let generated = try Data(contentsOf: directory.appendingPathComponent(name))
            let checkedIn = try Data(contentsOf: PythonPeer.packageRoot.appendingPathComponent("Vectors/\(name)"))
            #expect(generated.count > 10_000)
            #expect(generated == checkedIn, "\(name) differs from the generator's output")
        }
    }

    /// CIDs of random files computed through a manifest equal those of the PyPI `multiformats`
    /// package; the same file's CIDs with another codec, multibase or hash are refused.
    @Test func fileCIDsMatchMultiformatsAndOtherFormsAreRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-cids-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SecureRandom()
        let sizes = [0, 1, 1000, 65_536, 262_145, 1_048_583]
        var paths: [String] = []
        var expected: [String] = []
        for (index, size) in sizes.enumerated() {
            let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let url = directory.appendingPathComponent("file-\(index).bin")
            try Data(bytes).write(to: url)
            let contents = [UInt8](try Data(contentsOf: url))
            let chunkSize = 65_536
            var builder = try ManifestBuilder(
                fileSize: UInt64(contents.count), chunkSize: chunkSize, sessionID: "interop")
            for start in stride(from: 0, to: contents.count, by: chunkSize) {
                let chunk = Array(contents[start..<min(start + chunkSize, contents.count)])
                try builder.append(
                    ManifestChunk(length: chunk.count, sha256: SHA256.hash(chunk), crc32c: CRC32C.checksum(chunk)))
            }
            expected.append(try builder.finish(fileSHA256: SHA256.hash(contents)).cid.string)
            paths.append(url.path)
        }
        let output = String(decoding: try PythonPeer.run("cids.py", paths), as: UTF8.self)
        let lines = output.split(separator: "\n")
        #expect(lines.count == sizes.count)
        for (line, mine) in zip(lines, expected) {
            let fields = line.split(separator: " ").map(String.init)
            #expect(fields.count == 4)
            guard fields.count == 4 else { continue }
            #expect(fields[0] == mine)
            #expect(try CIDv1(string: fields[0]).string == mine)
            for other in fields[1...] {
                #expect {
                    try CIDv1(string: other)
                } throws: { ($0 as? IntegrityError)?.code == .malformedIdentifier }
            }
        }
    }

    /// A Python "server" answering with the standard library's hmac (its own build of the version-2 message)
    /// passes the verifier's check, for whole chunks and a range inside one.
    @Test func pythonHMACAnswersPassTheByzantineCheck() throws {
        // A clock that stays put: the interop test checks the answers, not the timing rules.
        let clock = ManualClock()
        let verifier = ByzantineVerifier(sampledChunks: [0, 1, 2, 3], clock: clock)
        var generator = SecureRandom()
        let chunks = [0, 1, 4096, 100_000].map { size in
            (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        let items = try [
            ByzantineChallenge.Item(index: 0, offset: 0, length: 0),
            ByzantineChallenge.Item(index: 1, offset: 0, length: 1),
            ByzantineChallenge.Item(index: 2, offset: 0, length: 4096),
            ByzantineChallenge.Item(index: 3, offset: 70_001, length: 12_345),
        ]
        let ranges = items.map { Array(chunks[$0.index][Int($0.offset)..<Int($0.offset + $0.length)]) }
        let uploadID = Array("abcdefghijklmnopqrstuvwx23".utf8)
        let prepared = try verifier.prepare(uploadID: uploadID, items: items, bytes: ranges)
        for index in 0..<4 { #expect(verifier.acknowledged(chunk: index)) }
        let challenge = try verifier.issue(prepared)
        var input = Data()
        for (item, range) in zip(items, ranges) {
            var frame = challenge.nonce + [UInt8(uploadID.count)] + uploadID
            for value in [UInt64(item.index), UInt64(item.offset)] {
                unsafe withUnsafeBytes(of: value.bigEndian) { unsafe frame.append(contentsOf: $0) }
            }
            frame += range
            unsafe withUnsafeBytes(of: UInt64(frame.count).littleEndian) { unsafe input.append(contentsOf: $0) }
            input.append(contentsOf: frame)
        }
        let lines = String(decoding: try PythonPeer.run("byzantine_server.py", input: input), as: UTF8.self)
            .split(separator: "\n")
        #expect(lines.count == items.count)
        let responses = try lines.map { try Digest32(hex: String($0)) }
        #expect(verifier.receive(challenge, responses: responses) == .verified(chunks: [0, 1, 2, 3]))
        #expect(verifier.verifiedCount == 4 && verifier.passed)
    }
}
