import AetherCoding
import AetherIO

/// `aether ec encode --data K --parity M FILE OUTDIR` and `aether ec decode OUTDIR FILE`.
enum ECCommand: CLICommand {
    static let name = "ec"
    static let summary = "erasure-code a file into k + m shards, or rebuild it from any k"
    static let usage = """
        usage: aether ec encode --data K --parity M FILE OUTDIR
               aether ec encode --fountain --symbol-size T --repair R [--block-size B] FILE OUTDIR
               aether ec decode OUTDIR FILE [--expect-sha256 HEX]

          encode  splits FILE into K data shards and M Reed-Solomon parity shards (ISA-L's Cauchy matrix,
                  GF(2^8) up to 256 shards, GF(2^16) above) and writes them with index.json (which records
                  FILE's SHA-256) into a new directory beside OUTDIR, then switches it in whole: an earlier
                  set in OUTDIR is replaced only by a complete new one. OUTDIR must be missing, empty or
                  hold only a shard set, and may not hold FILE. FILE changing meanwhile is an error.
          --fountain  codes FILE with RaptorQ (RFC 6330) instead: one file per encoding packet (FEC payload
                  ID, then a T-byte symbol), K source and R repair packets a source block, and index.json
                  with the 12-byte OTI as hex; switched in whole the same way. One source block at a
                  time is coded, in both directions; --block-size B (bytes, K/M/G suffixes) caps a source
                  block (one sub-block, at most B / T symbols, B at most 128M) and so the memory a run
                  needs; without it the OTI is RFC 6330's derivation for a 10 MiB working memory, or the
                  --block-size 128M one where that would make a block larger than 128 MiB
          decode  rebuilds FILE from any K shards in OUTDIR; missing, wrong-size and damaged shards
                  (SHA-256 mismatch against index.json) are erasures. The rebuilt file must have the SHA-256
                  index.json records (and HEX, when given) before it replaces FILE; FILE may not be in
                  OUTDIR. A new FILE gets mode 0666 less the umask, an existing one keeps its mode. A
                  fountain index (the index says which code) rebuilds FILE from whatever intact packets are left.
        """

    static func run(_ arguments: [Word]) async throws -> Int32 {
        guard let action = arguments.first else { throw Arguments.UsageError(description: "expected encode or decode") }
        let rest = Array(arguments.dropFirst())
        switch action.text {
        case "encode":
            let parsed = try Arguments(
                rest, options: ["data", "parity", "symbol-size", "repair", "block-size"], flags: ["fountain"],
                positionals: 2...2)
            if parsed.flag("fountain") { return try encodeFountain(parsed) }
            guard parsed.option("block-size") == nil else {
                throw Arguments.UsageError(description: "--block-size is for --fountain")
            }
            guard parsed.option("data") != nil, parsed.option("parity") != nil else {
                throw Arguments.UsageError(description: "encode needs --data K and --parity M")
            }
            let k = try parsed.integer("data", default: 1, in: 1...65536)
            let m = try parsed.integer("parity", default: 0, in: 0...65535)
            let paths = try parsed.positionals(exactly: 2, names: "FILE OUTDIR")
            let index = try ErasureCodedFile.encode(
                file: paths[0].path, dataShards: k, parityShards: m, into: paths[1].path)
            StandardOutput.write(
                "encoded \(paths[0]) (\(index.fileSize) bytes, sha256 \(index.fileSHA256?.hex ?? "-")) as "
                    + "\(index.code): \(index.code.totalShards) shards of \(index.shardSize) bytes in \(paths[1])\n")
            return ExitStatus.success
        case "decode":
            let parsed = try Arguments(rest, options: ["expect-sha256"], positionals: 2...2)
            let paths = try parsed.positionals(exactly: 2, names: "OUTDIR FILE")
            let expected = try parsed.value("expect-sha256", expected: "64 hex digits") { try Digest32(hex: $0) }
            if try FountainCodedFile.isFountainDirectory(paths[0].path) {
                guard expected == nil else {
                    throw Arguments.UsageError(description: "--expect-sha256 applies to Reed-Solomon sets only")
                }
                return try decodeFountain(paths)
            }
            let report = try ErasureCodedFile.decode(
                directory: paths[0].path, to: paths[1].path, expectedSHA256: expected)
            var line = "rebuilt \(paths[1]) (\(report.index.fileSize) bytes) from shards \(report.inputShards)"
            if !report.rebuiltDataShards.isEmpty { line += "; recovered data shards \(report.rebuiltDataShards)" }
            if !report.missingShards.isEmpty { line += "; missing \(report.missingShards)" }
            if !report.wrongSizeShards.isEmpty { line += "; wrong size \(report.wrongSizeShards)" }
            if !report.corruptShards.isEmpty { line += "; damaged \(report.corruptShards)" }
            StandardOutput.write(line + "\n")
            return ExitStatus.success
        default:
            throw Arguments.UsageError(description: "unknown action \(action); expected encode or decode")
        }
    }

    /// `encode --fountain --symbol-size T --repair R FILE OUTDIR`.
    static func encodeFountain(_ parsed: Arguments) throws -> Int32 {
        guard parsed.option("data") == nil, parsed.option("parity") == nil else {
            throw Arguments.UsageError(description: "--fountain takes --symbol-size and --repair, not --data/--parity")
        }
        guard parsed.option("symbol-size") != nil, parsed.option("repair") != nil else {
            throw Arguments.UsageError(description: "encode --fountain needs --symbol-size T and --repair R")
        }
        let t = try parsed.integer("symbol-size", default: 1280, in: 1...65535)
        let r = try parsed.integer("repair", default: 0, in: 0...1_000_000)
        let paths = try parsed.positionals(exactly: 2, names: "FILE OUTDIR")
        let index: FountainIndex
        if parsed.option("block-size") != nil {
            let blockSize = try parsed.integer("block-size", default: 0, in: 1...FountainCodedFile.maximumBlockSize)
            index = try FountainCodedFile.encode(
                file: paths[0].path, symbolSize: t, repairSymbolsPerBlock: r, maximumBlockSize: blockSize,
                into: paths[1].path)
        } else {
            index = try FountainCodedFile.encode(
                file: paths[0].path, symbolSize: t, repairSymbolsPerBlock: r, into: paths[1].path)
        }
        let oti = index.transmissionInformation
        print(
            TerminalText.safe(
                "encoded \(paths[0]) (\(index.fileSize) bytes) with RaptorQ: \(index.packetDigests.count) packets of "
                    + "\(oti.symbolSize)-byte symbols in \(oti.sourceBlocks) source block(s), \(r) repair a block, in "
                    + "\(paths[1])")
        )
        return ExitStatus.success
    }

    /// `decode OUTDIR FILE` for a fountain index.
    static func decodeFountain(_ paths: [Word]) throws -> Int32 {
        let report = try FountainCodedFile.decode(directory: paths[0].path, to: paths[1].path)
        print(
            TerminalText.safe(
                "rebuilt \(paths[1]) (\(report.index.fileSize) bytes) from \(report.packetsUsed) RaptorQ packets; "
                    + "missing \(report.missingPackets), damaged \(report.damagedPackets)"))
        return ExitStatus.success
    }
}
