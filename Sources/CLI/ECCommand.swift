import AetherCoding
import AetherIO

/// `aether ec encode --data K --parity M FILE OUTDIR` and `aether ec decode OUTDIR FILE`.
enum ECCommand: CLICommand {
    static let name = "ec"
    static let summary = "erasure-code a file into k + m shards, or rebuild it from any k"
    static let usage = """
        usage: aether ec encode --data K --parity M FILE OUTDIR
               aether ec decode OUTDIR FILE [--expect-sha256 HEX]

          encode  splits FILE into K data shards and M Reed-Solomon parity shards (ISA-L's Cauchy matrix,
                  GF(2^8) up to 256 shards, GF(2^16) above) and writes them with index.json (which records
                  FILE's SHA-256) into a new directory beside OUTDIR, then switches it in whole: an earlier
                  set in OUTDIR is replaced only by a complete new one. OUTDIR must be missing, empty or
                  hold only a shard set, and may not hold FILE. FILE changing meanwhile is an error.
          decode  rebuilds FILE from any K shards in OUTDIR; missing, wrong-size and damaged shards
                  (SHA-256 mismatch against index.json) are erasures. The rebuilt file must have the SHA-256
                  index.json records (and HEX, when given) before it replaces FILE; FILE may not be in
                  OUTDIR. A new FILE gets mode 0666 less the umask, an existing one keeps its mode.
        """

    static func run(_ arguments: [Word]) async throws -> Int32 {
        guard let action = arguments.first else { throw Arguments.UsageError(description: "expected encode or decode") }
        let rest = Array(arguments.dropFirst())
        switch action.text {
        case "encode":
            let parsed = try Arguments(rest, options: ["data", "parity"], positionals: 2...2)
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
}
