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

    /// A Python "server" answering with the standard library's hmac passes the verifier's check.
    @Test func pythonHMACAnswersPassTheByzantineCheck() throws {
        // A clock that stays put: the interop test checks the answers, not the timing rules.
        let clock = ManualClock()
        let sampled = [0, 1, 2, 3]
        let verifier = ByzantineVerifier(sampledChunks: sampled, clock: clock)
        var generator = SecureRandom()
        let chunks = [0, 1, 4096, 100_000].map { size in
            (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        var input = Data()
        var challenges: [ByzantineChallenge] = []
        for (index, chunk) in chunks.enumerated() {
            #expect(verifier.acknowledged(chunk: index))
            let challenge = try verifier.challenge(chunk: index, contents: chunk)
            challenges.append(challenge)
            let frame = challenge.nonce + chunk
            unsafe withUnsafeBytes(of: UInt64(frame.count).littleEndian) { unsafe input.append(contentsOf: $0) }
            input.append(contentsOf: frame)
        }
        let lines = String(decoding: try PythonPeer.run("byzantine_server.py", input: input), as: UTF8.self)
            .split(separator: "\n")
        #expect(lines.count == chunks.count)
        for (index, line) in lines.enumerated() {
            #expect(verifier.receive(chunk: index, response: try Digest32(hex: line)) == .verified(chunk: index))
        }
        #expect(verifier.verifiedCount == 4)
    }
}
