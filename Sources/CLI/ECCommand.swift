import AetherCoding

/// `aether ec encode --data K --parity M FILE OUTDIR` and `aether ec decode OUTDIR FILE`.
enum ECCommand: CLICommand {
    static let name = "ec"
    static let summary = "erasure-code a file into k + m shards, or rebuild it from any k"
    static let usage = """
        usage: aether ec encode --data K --parity M FILE OUTDIR
               aether ec decode OUTDIR FILE

          encode  splits FILE into K data shards and M Reed-Solomon parity shards (ISA-L's Cauchy matrix,
                  GF(2^8) up to 256 shards, GF(2^16) above) and writes them with index.json to OUTDIR
          decode  rebuilds FILE from any K shards in OUTDIR; missing, wrong-size and damaged shards
                  (SHA-256 mismatch against index.json) are erasures. FILE is replaced only after the
                  rebuilt data matches the index.
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        guard let action = arguments.first else { throw Arguments.UsageError(description: "expected encode or decode") }
        let rest = Array(arguments.dropFirst())
        switch action {
        case "encode":
            let parsed = try Arguments(rest, options: ["data", "parity"])
            guard parsed.option("data") != nil, parsed.option("parity") != nil else {
                throw Arguments.UsageError(description: "encode needs --data K and --parity M")
            }
            let k = try parsed.integer("data", default: 1, in: 1...65536)
            let m = try parsed.integer("parity", default: 0, in: 0...65535)
            let paths = try parsed.positionals(exactly: 2, names: "FILE OUTDIR")
            let index = try ErasureCodedFile.encode(file: paths[0], dataShards: k, parityShards: m, into: paths[1])
            print(
                "encoded \(paths[0]) (\(index.fileSize) bytes) as \(index.code): \(index.code.totalShards) shards of "
                    + "\(index.shardSize) bytes in \(paths[1])")
            return ExitStatus.success
        case "decode":
            let parsed = try Arguments(rest)
            let paths = try parsed.positionals(exactly: 2, names: "OUTDIR FILE")
            let report = try ErasureCodedFile.decode(directory: paths[0], to: paths[1])
            var line = "rebuilt \(paths[1]) (\(report.index.fileSize) bytes) from shards \(report.inputShards)"
            if !report.rebuiltDataShards.isEmpty { line += "; recovered data shards \(report.rebuiltDataShards)" }
            if !report.missingShards.isEmpty { line += "; missing \(report.missingShards)" }
            if !report.wrongSizeShards.isEmpty { line += "; wrong size \(report.wrongSizeShards)" }
            if !report.corruptShards.isEmpty { line += "; damaged \(report.corruptShards)" }
            print(line)
            return ExitStatus.success
        default:
            throw Arguments.UsageError(description: "unknown action \(action); expected encode or decode")
        }
    }
}
