import AetherCoding
import AetherIO
import Foundation
import Testing

/// Issue 11's memory rule for the fountain file path: `aether ec encode --fountain` and `ec decode` of a
/// 128 MiB file, each in its own process, peak well below the file's size (the whole-file version held
/// several copies of it, over 500 MB).
@Suite struct FountainMemoryLiveTests {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let fileSize = 128 << 20

    /// Runs `aether ARGS` (standard output to /dev/null) under `peers/peak_rss.py` and returns its exit
    /// status and peak resident set in bytes (`wait4`'s resource usage of exactly that child).
    static func runMeasured(_ arguments: [String], timeout: Int = 300) throws -> (status: Int32, peak: Int) {
        let output = try PythonPeer.run("peak_rss.py", [String(timeout), SessionLive.aetherPath] + arguments)
        let fields = String(decoding: output, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let status = Int32(fields[0]), let kib = Int(fields[1]) else {
            throw Failure(description: "peak_rss.py printed \(String(decoding: output, as: UTF8.self))")
        }
        return (status, kib * 1024)
    }

    @Test func encodeAndDecodeOfALargeFilePeakWellBelowItsSize() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = directory + "/input.bin"
        let set = directory + "/set"
        let output = directory + "/output.bin"
        // A quick file: sparse zeros with 64 KiB of random bytes every 8 MiB.
        _ = FileManager.default.createFile(atPath: input, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: input))
        try handle.truncate(atOffset: UInt64(Self.fileSize))
        for offset in stride(from: 0, to: Self.fileSize, by: 8 << 20) {
            try handle.seek(toOffset: UInt64(offset))
            try handle.write(contentsOf: Data(SecureRandom.bytes(64 << 10)))
        }
        try handle.close()

        let encode = try Self.runMeasured([
            "ec", "encode", "--fountain", "--symbol-size", "65528", "--repair", "2", "--block-size", "2M", input, set,
        ])
        #expect(encode.status == 0)
        #expect(encode.peak < Self.fileSize / 2, "encode peaked at \(encode.peak) bytes")
        let index = try FountainIndex(json: Array(try Data(contentsOf: URL(fileURLWithPath: set + "/index.json"))))
        let blocks = index.transmissionInformation.sourceBlocks
        #expect(blocks >= 60 && index.fileSize == Self.fileSize)

        // A source packet lost in several blocks: those blocks are rebuilt from repair packets.
        for block in [0, 17, blocks - 1] {
            let name = String(format: "packet-%03d-%08d.bin", block, 1)
            try FileManager.default.removeItem(atPath: set + "/" + name)
        }
        let decode = try Self.runMeasured(["ec", "decode", set, output])
        #expect(decode.status == 0)
        #expect(decode.peak < Self.fileSize / 2, "decode peaked at \(decode.peak) bytes")
        #expect(try Self.sameContents(output, input))
    }

    /// `--block-size` caps a source block at B / T symbols; it is a usage error without `--fountain`, and
    /// a cap below ten symbols is a typed error, not a crash.
    @Test func blockSizeCapsTheSourceBlocks() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = directory + "/input.bin"
        try Data(SecureRandom.bytes(50_000)).write(to: URL(fileURLWithPath: input))
        let (status, _, err) = try SessionLive.runAether([
            "ec", "encode", "--fountain", "--symbol-size", "1024", "--repair", "1", "--block-size", "12K", input,
            directory + "/set",
        ])
        #expect(status == 0, "\(err)")
        let index = try FountainIndex(
            json: Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/set/index.json"))))
        let oti = index.transmissionInformation
        #expect(oti.subBlocks == 1 && oti.sourceBlocks == 5)
        #expect((0..<oti.sourceBlocks).allSatisfy { oti.sourceSymbols(inBlock: $0) * 1024 <= 12 << 10 })
        #expect(try SessionLive.runAether(["ec", "decode", directory + "/set", directory + "/output.bin"]).0 == 0)
        #expect(try Self.sameContents(directory + "/output.bin", input))

        let usage = try SessionLive.runAether([
            "ec", "encode", "--data", "2", "--parity", "1", "--block-size", "1M", input, directory + "/rs",
        ])
        #expect(usage.0 == 2 && usage.2.contains("--block-size is for --fountain"))
        let tooSmall = try SessionLive.runAether([
            "ec", "encode", "--fountain", "--symbol-size", "1024", "--repair", "1", "--block-size", "5K", input,
            directory + "/small",
        ])
        #expect(tooSmall.0 == 1 && tooSmall.2.contains("cannot hold the 10 symbols"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/small/index.json"))
    }

    /// Whether two files hold the same bytes, compared 8 MiB at a time.
    static func sameContents(_ a: String, _ b: String) throws -> Bool {
        let first = try FileHandle(forReadingFrom: URL(fileURLWithPath: a))
        let second = try FileHandle(forReadingFrom: URL(fileURLWithPath: b))
        defer {
            try? first.close()
            try? second.close()
        }
        while true {
            let left = try first.read(upToCount: 8 << 20) ?? Data()
            let right = try second.read(upToCount: 8 << 20) ?? Data()
            guard left == right else { return false }
            if left.isEmpty { return true }
        }
    }
}
