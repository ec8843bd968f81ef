import AetherIO
import Foundation
import Testing

@testable import AetherTransport

/// The zstd and deflate content coders: round trips in pieces, the decoded-size limit against bombs, corrupt and
/// truncated input, interop with the `zstd` command line tool and Python's zlib, and the compressibility probe.
@Suite struct ContentCodingTests {
    static func random(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    /// Text-like bytes: compressible but not trivially.
    static func text(_ count: Int) -> [UInt8] {
        let words = ["aether", "chunk", "merkle", "receipt", "upload", "parity", "zstd", "deflate", "\n"]
        var out: [UInt8] = []
        var generator = SplitMix64(seed: 7)
        while out.count < count {
            out += Array(words[Int(generator.next() % UInt64(words.count))].utf8)
            out.append(0x20)
        }
        return Array(out.prefix(count))
    }

    @Test(arguments: ContentCoding.allCases, [0, 1, 100_000, 1 << 20])
    func bytesRoundTripThroughEveryCodingInOddPieces(coding: ContentCoding, size: Int) throws {
        let input = Self.text(size / 2) + Self.random(size - size / 2, seed: UInt64(size))
        let encoder = try ContentEncoder(coding)
        var encoded: [UInt8] = []
        var offset = 0
        while offset < input.count {
            let end = min(offset + 12_345, input.count)
            encoded += try encoder.update(input[offset..<end])
            offset = end
        }
        encoded += try encoder.finish()
        let decoder = try ContentDecoder(coding, limit: Int64(size))
        var decoded: [UInt8] = []
        offset = 0
        while offset < encoded.count {
            let end = min(offset + 777, encoded.count)
            decoded += try decoder.update(encoded[offset..<end])
            offset = end
        }
        try decoder.finish()
        #expect(decoded == input)
        #expect(decoder.decodedCount == Int64(size))
        #expect(try ContentDecoder.decode(ContentEncoder.encode(input, coding), coding, limit: Int64(size)) == input)
    }

    @Test(arguments: ContentCoding.allCases)
    func aBombStopsAtTheLimitWithATypedError(coding: ContentCoding) throws {
        let bomb = try ContentEncoder.encode([UInt8](repeating: 0, count: 64 << 20), coding, level: 1)
        #expect(bomb.count < 1 << 20)
        let decoder = try ContentDecoder(coding, limit: 1 << 20)
        var produced = 0
        let error = #expect(throws: AetherProtocolError.self) {
            var offset = 0
            while offset < bomb.count {
                produced += try decoder.update(bomb[offset..<min(offset + 4096, bomb.count)]).count
                offset += 4096
            }
        }
        #expect(error?.code == .decodedTooLarge)
        #expect(produced <= 1 << 20)
        #expect(decoder.decodedCount <= 1 << 20)
        #expect(throws: AetherProtocolError.self) { try decoder.finish() }
    }

    @Test(arguments: ContentCoding.allCases)
    func theLimitIsInclusive(coding: ContentCoding) throws {
        let input = Self.text(50_000)
        let encoded = try ContentEncoder.encode(input, coding)
        #expect(try ContentDecoder.decode(encoded, coding, limit: 50_000) == input)
        let error = #expect(throws: AetherProtocolError.self) {
            try ContentDecoder.decode(encoded, coding, limit: 49_999)
        }
        #expect(error?.code == .decodedTooLarge)
    }

    @Test(arguments: ContentCoding.allCases)
    func corruptAndTruncatedBodiesAreTypedErrors(coding: ContentCoding) throws {
        let encoded = try ContentEncoder.encode(Self.text(100_000), coding)
        let truncated = #expect(throws: AetherProtocolError.self) {
            try ContentDecoder.decode(encoded.prefix(encoded.count / 2), coding, limit: 1 << 20)
        }
        #expect(truncated?.code == .truncatedEncoding)
        let empty = #expect(throws: AetherProtocolError.self) { try ContentDecoder.decode([], coding, limit: 10) }
        #expect(empty?.code == .truncatedEncoding)
        let garbage = #expect(throws: AetherProtocolError.self) {
            try ContentDecoder.decode(Self.random(1000, seed: 3), coding, limit: 1 << 20)
        }
        #expect(garbage?.code == .corruptEncoding)
        var flipped = encoded
        flipped[flipped.count - 3] ^= 0xFF
        #expect(throws: AetherProtocolError.self) { try ContentDecoder.decode(flipped, coding, limit: 1 << 20) }
    }

    @Test func bytesAfterTheZlibStreamAreCorrupt() throws {
        let encoded = try ContentEncoder.encode(Self.text(1000), .deflate)
        let error = #expect(throws: AetherProtocolError.self) {
            try ContentDecoder.decode(encoded + [0], .deflate, limit: 1 << 20)
        }
        #expect(error?.code == .corruptEncoding)
    }

    @Test func levelsOutsideTheirRangeAreRefused() {
        #expect(throws: AetherProtocolError.self) { try ContentEncoder(.zstd, level: 20) }
        #expect(throws: AetherProtocolError.self) { try ContentEncoder(.deflate, level: 0) }
        #expect(throws: AetherProtocolError.self) { try ContentDecoder(.zstd, limit: -1) }
    }

    @Test func theProbePaysOnlyWhenItSavesTenPercent() {
        #expect(CompressionProbe.pays(Self.text(1 << 20), coding: .zstd))
        #expect(CompressionProbe.pays([UInt8](repeating: 1, count: 40_000), coding: .deflate))
        #expect(!CompressionProbe.pays(Self.random(1 << 20, seed: 5), coding: .zstd))
        #expect(!CompressionProbe.pays(Self.random(1 << 20, seed: 5), coding: .deflate))
        #expect(!CompressionProbe.pays([], coding: .zstd))
        // Half random, half zeros inside the sample: about 50%, pays; random sample then zeros: does not.
        let sample = Self.random(16 << 10, seed: 9) + [UInt8](repeating: 0, count: 16 << 10)
        #expect(CompressionProbe.pays(sample, coding: .zstd))
        let late = Self.random(32 << 10, seed: 9) + [UInt8](repeating: 0, count: 1 << 20)
        #expect(!CompressionProbe.pays(late, coding: .zstd))
        if let ratio = CompressionProbe.ratio(sample, coding: .zstd) { #expect(ratio > 0.4 && ratio < 0.6) }
    }

    // MARK: Interop

    static func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aether-coding-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func framesOfTheZstdToolDecodeAndOursDecodeWithTheTool() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = Self.text(300_000) + Self.random(100_000, seed: 11)
        let plain = directory.appendingPathComponent("plain")
        try Data(input).write(to: plain)
        for level in ["-1", "-19"] {
            let theirs = directory.appendingPathComponent("theirs\(level).zst")
            #expect(try Self.run("zstd", ["-q", level, "-f", plain.path, "-o", theirs.path]) == 0)
            let frame = Array(try Data(contentsOf: theirs))
            #expect(try ContentDecoder.decode(frame, .zstd, limit: Int64(input.count)) == input)
        }
        // Two frames back to back (zstd -d accepts them; so do we).
        let half = input.count / 2
        let two = try ContentEncoder.encode(input[..<half], .zstd) + ContentEncoder.encode(input[half...], .zstd)
        #expect(try ContentDecoder.decode(two, .zstd, limit: Int64(input.count)) == input)
        let ours = directory.appendingPathComponent("ours.zst")
        try Data(try ContentEncoder.encode(input, .zstd)).write(to: ours)
        let back = directory.appendingPathComponent("back")
        #expect(try Self.run("zstd", ["-q", "-d", "-f", ours.path, "-o", back.path]) == 0)
        #expect(Array(try Data(contentsOf: back)) == input)
    }

    @Test func deflateMatchesPythonsZlibBothWays() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = Self.text(200_000)
        let plain = directory.appendingPathComponent("plain")
        let theirs = directory.appendingPathComponent("theirs.z")
        try Data(input).write(to: plain)
        let compress =
            "import sys, zlib; open(sys.argv[2], 'wb').write(zlib.compress(open(sys.argv[1], 'rb').read(), 9))"
        #expect(try Self.run("python3", ["-c", compress, plain.path, theirs.path]) == 0)
        #expect(try ContentDecoder.decode(Array(Data(contentsOf: theirs)), .deflate, limit: 200_000) == input)
        let ours = directory.appendingPathComponent("ours.z")
        let back = directory.appendingPathComponent("back")
        try Data(try ContentEncoder.encode(input, .deflate)).write(to: ours)
        let decompress =
            "import sys, zlib; open(sys.argv[2], 'wb').write(zlib.decompress(open(sys.argv[1], 'rb').read()))"
        #expect(try Self.run("python3", ["-c", decompress, ours.path, back.path]) == 0)
        #expect(Array(try Data(contentsOf: back)) == input)
    }
}
