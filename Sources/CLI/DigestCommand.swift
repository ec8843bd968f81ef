import AetherIO
import AetherIntegrity

/// `aether digest FILE [--chunk-size N] [--json] [--strategy pread|ioUring] [--manifest OUT.json]`
enum DigestCommand: CLICommand {
    static let name = "digest"
    static let summary = "digest a file (SHA-256, CRC32C, chunks, Merkle root, chain head, CID); write its manifest"
    static let usage = """
        usage: aether digest FILE [--chunk-size N] [--json] [--strategy pread|ioUring]
                             [--manifest OUT.json] [--session-id ID]
          Reads FILE once under the TOCTOU guard and prints its SHA-256, CRC32C, Merkle root,
          commitment-chain head and CID, then each chunk's SHA-256 and CRC32C. N is 4K...256M and
          takes K/M/G suffixes (default 4M). --manifest writes the canonical JSON manifest
          (atomically) that `aether verify` checks; it may not be FILE or a link to it.
          --session-id seeds the chain's genesis (default aether-manifest).
          A file that changes while it is read, or is not a readable regular file, is an error (exit 1).
          (mmap reading is not offered here: a file truncated by another process during the read
          would kill the process with SIGBUS.)
        """

    static func run(_ arguments: [Word]) async throws -> Int32 {
        let parsed = try Arguments(
            arguments, options: ["chunk-size", "strategy", "manifest", "session-id"], flags: ["json"],
            positionals: 1...1)
        let word = try parsed.positionals(exactly: 1, names: "one FILE")[0]
        let path = word.description
        var options = ChunkReadOptions()
        options.chunkSize = try parsed.integer(
            "chunk-size", default: ChunkReadOptions.defaultChunkSize, in: FileManifest.chunkSizeRange)
        if let text = parsed.option("strategy") {
            guard let strategy = ReadStrategy(rawValue: text), strategy != .mmap else {
                throw Arguments.UsageError(description: "--strategy must be pread or ioUring")
            }
            options.strategy = strategy
        }
        let json = parsed.flag("json")
        let output = parsed.path("manifest")
        if let output, let input = try FileIdentity.current(word.path) {
            // Before the read, so a mistake costs nothing; checked again with the identity that was read.
            try OutputGuard.check(output: output, inputs: [input])
        }
        let (file, chunks, manifest, identity) = try FileManifest.build(
            path: word.path, options: options,
            sessionID: parsed.option("session-id") ?? FileManifest.defaultSessionID)
        if let output { try FileManifest.write(manifest, to: output, input: identity) }
        if json {
            print("{\"path\":\(jsonString(path)),\"size\":\(file.fingerprint.size),\"sha256\":\"\(file.sha256.hex)\",")
            print(
                "\"crc32c\":\"\(file.crc32cHex)\",\"chunk_size\":\(file.chunkSize),\"strategy\":\"\(file.strategy)\",")
            print(
                "\"merkle_root\":\"\(manifest.merkleRoot.hex)\",\"chain_head\":\"\(manifest.chainHead.hex)\","
                    + "\"cid\":\"\(manifest.cid.string)\",")
            print("\"chunks\":[")
            for (index, chunk) in chunks.enumerated() {
                print(jsonChunk(chunk) + (index + 1 < chunks.count ? "," : ""))
            }
            print("]}")
        } else {
            print("\(file.sha256.hex)  \(TerminalText.safe("\(path)"))")
            print("sha256 \(file.sha256.hex)")
            print("crc32c \(file.crc32cHex)")
            print("merkle_root \(manifest.merkleRoot.hex)")
            print("chain_head \(manifest.chainHead.hex)")
            print("cid \(manifest.cid.string)")
            print(
                "size \(file.fingerprint.size)  chunk_size \(file.chunkSize)  chunks \(file.chunkCount)  strategy \(file.strategy)"
            )
            for chunk in chunks { print(textChunk(chunk)) }
        }
        return ExitStatus.success
    }

    private static func textChunk(_ digest: ChunkDigest) -> String {
        "chunk \(digest.index) offset \(digest.offset) length \(digest.length) sha256 \(digest.sha256.hex) crc32c \(digest.crc32cHex)"
    }

    private static func jsonChunk(_ digest: ChunkDigest) -> String {
        "{\"index\":\(digest.index),\"offset\":\(digest.offset),\"length\":\(digest.length),"
            + "\"sha256\":\"\(digest.sha256.hex)\",\"crc32c\":\"\(digest.crc32cHex)\"}"
    }

    // A JSON string literal: quotes, backslashes and control characters escaped.
    private static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
