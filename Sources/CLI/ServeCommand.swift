import AetherIO
import AetherReceiver
import AetherTransport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `aether serve`: the receiver (docs/RECEIVER.md).
enum ServeCommand: CLICommand {
    static let name = "serve"
    static let summary = "run the receiver: native, IETF resumable and tus uploads on one port"
    static let usage = """
        usage: aether serve (--dir D | --catalog URL --blobs s3://BUCKET/PREFIX) --port P [--bind ADDR] [--tls-cert C --tls-key K] [--tokens F]
                            [--log-format text|json] [--max-object N] [--expire-after S] [--catalog URL]
                            [--blobs s3://BUCKET/PREFIX [--endpoint URL] [--region R]] [--header-timeout S]
                            [--idle-timeout S] [--max-connections N] [--max-connections-per-client N]
                            [--dedup-across-clients] [--max-partials N] [--min-chunk N]

          --dir D            store directory (created if missing): objects, chunks and catalog.sqlite3; not
                             needed with both --catalog and --blobs (fleet mode keeps nothing local)
          --port P           TCP port, 0 to pick a free one (the chosen one is printed)
          --bind ADDR        IPv4 or IPv6 address to listen on (default 127.0.0.1); another address than
                             loopback needs --tokens
          --tls-cert C       PEM certificate (chain) for HTTPS; with --tls-key
          --tls-key K        PEM private key for HTTPS; with --tls-cert
          --tokens F         bearer tokens, one `name:token` or one token per line, each of 16 bytes or
                             more and none twice; F must be mode 600 (no group or other access). Without
                             it only loopback clients are served
          --log-format F     request log on standard error: text (default) or json (one object a line)
          --max-object N     largest object in bytes (K, M, G suffixes; default 1 TiB)
          --expire-after S   seconds an idle upload is kept (default 86400)
          --catalog URL      PostgreSQL catalogue shared by a fleet of receivers (postgres://USER@HOST/DB or
                             postgresql:///DB?host=/socket/dir; the password from the URL, PGPASSWORD or
                             ~/.pgpass) instead of catalog.sqlite3 in --dir; blobs stay in --dir
          --blobs s3://B/P   blobs in S3 bucket B under prefix P (fleet mode) instead of --dir; credentials
                             and region as the S3 backend reads them (AWS_ACCESS_KEY_ID, AWS_PROFILE, ...)
          --endpoint URL     S3-compatible endpoint for --blobs (MinIO, Ceph, moto; path-style addressing)
          --region R         signing region for --blobs (default: AWS_REGION, the profile, us-east-1)
          --header-timeout S seconds a connection's first request head may take from the accept, in all
                             (default 20); past it the connection is closed, however the bytes trickle in
          --idle-timeout S   seconds a request may go without a byte moving before it is cut, and a
                             kept-alive connection may wait for its next request head in all (default 60)
          --max-connections N
                             connections open at once (default 1024, lowered to fit the open-file limit);
                             near it, the connection waiting longest for a request head is closed
          --max-connections-per-client N
                             connections open at once from one address, an IPv6 client counted by its /64
                             (default 64; 0 is no limit, as behind a proxy that limits clients itself)
          --dedup-across-clients
                             dedup against files any client stored, not only the uploader's own; then any
                             client can learn whether anyone holds a file whose SHA-256 and size it knows
          --max-partials N   received prefixes of cut native chunks kept in all, for continuations (default
                             4096, each a few hundred bytes of memory; 0 keeps none: a cut chunk is sent
                             again whole, and resume-chunk is not advertised)
          --min-chunk N      smallest native chunk taken, in bytes (K, M suffixes; a multiple of 16 KiB;
                             default 256K, with --blobs S3's 5 MiB part floor: a smaller chunk is a piece
                             the completion reads back and sends again, where a larger one is copied
                             server side)

        Prints `listening on URL` once ready. SIGTERM or SIGINT stops gracefully (requests under way finish)
        and exits 0.
        """

    static func run(_ arguments: [Word]) async throws -> Int32 {
        let parsed = try Arguments(
            arguments,
            options: [
                "dir", "port", "bind", "tls-cert", "tls-key", "tokens", "log-format", "max-object", "expire-after",
                "catalog", "blobs", "endpoint", "region", "header-timeout", "idle-timeout", "max-connections",
                "max-connections-per-client", "max-partials", "min-chunk",
            ], flags: ["dedup-across-clients"])
        // Fleet mode keeps nothing local: with both the catalogue and the blobs elsewhere no --dir is needed.
        let directory = parsed.path("dir")
        guard directory != nil || (parsed.option("catalog") != nil && parsed.option("blobs") != nil) else {
            throw Arguments.UsageError(description: "--dir is required (unless both --catalog and --blobs are given)")
        }
        guard parsed.option("port") != nil else { throw Arguments.UsageError(description: "--port is required") }
        let port = try parsed.integer("port", default: 0, in: 0...65535)
        let bind = parsed.option("bind") ?? "127.0.0.1"
        let format = try parsed.value("log-format", expected: "text or json") { text throws in
            guard let format = RequestLog.Format(rawValue: text) else { throw Arguments.UsageError(description: "") }
            return format
        }
        var limits = ReceiverLimits()
        limits.maximumObjectSize = Int64(
            try parsed.integer("max-object", default: Int(limits.maximumObjectSize), in: 0...(1 << 50)))
        limits.expirySeconds = Int64(
            try parsed.integer("expire-after", default: Int(limits.expirySeconds), in: 1...(365 * 86_400)))
        limits.dedupAcrossClients = parsed.flag("dedup-across-clients")
        limits.maximumPartials = try parsed.integer(
            "max-partials", default: limits.maximumPartials, in: 0...(1 << 20))
        let minimumChunk = try parsed.option("min-chunk").map { _ throws in
            try parsed.integer(
                "min-chunk", default: limits.minimumChunkSize,
                in: ReceiverLimits.chunkGranularity...limits.maximumChunkSize)
        }
        if let minimumChunk {
            guard minimumChunk % ReceiverLimits.chunkGranularity == 0 else {
                throw Arguments.UsageError(description: "--min-chunk must be a multiple of 16 KiB (16K)")
            }
            limits.minimumChunkSize = minimumChunk
        }
        var http = HTTPServerConfiguration(bindAddress: bind, port: UInt16(port))
        http.headerTimeoutSeconds = Double(
            try parsed.integer("header-timeout", default: Int(http.headerTimeoutSeconds), in: 1...3600))
        http.idleTimeoutSeconds = UInt32(
            try parsed.integer("idle-timeout", default: Int(http.idleTimeoutSeconds), in: 1...86_400))
        http.connectionLimit = UInt32(
            try parsed.integer(
                "max-connections", default: Int(http.connectionLimit),
                in: ReceiverServer.minimumConnections...65_536))
        http.perClientConnectionLimit = UInt32(
            try parsed.integer(
                "max-connections-per-client", default: Int(http.perClientConnectionLimit), in: 0...65_536))
        switch (parsed.path("tls-cert"), parsed.path("tls-key")) {
        case (nil, nil): break
        case (let cert?, let key?): http.tls = (try readPEM(cert), try readPEM(key))
        default: throw Arguments.UsageError(description: "--tls-cert and --tls-key go together")
        }
        let tokens = try parsed.path("tokens").map { path throws(ReceiverError) in
            try BearerTokens(contentsOf: path)
        }
        // Up to the hard limit: each connection holds a descriptor or two.
        OpenFileLimit.raise()
        var options = ReceiverServer.Options(
            directory: directory, http: http, limits: limits, tokens: tokens, logFormat: format ?? .text)
        options.catalogURL = try catalogURL(parsed)
        // A --min-chunk given replaces the S3 store's own floor.
        let s3 = try ServeBlobs.store(parsed, minimumChunkSize: minimumChunk.map { _ in 0 })
        options.blobs = s3
        // Opening recovers the store; over S3 that blocks on the network, so it runs on a thread of its own.
        let opening = options
        let server = try await ServeBlobs.onThread { () throws(ReceiverError) in
            try s3?.checkBucket()
            return try ReceiverServer(opening)
        }
        if let s3 {
            StandardOutput.write("blobs: s3://\(s3.client.bucket)/\(s3.prefix) (--blobs)\n")
        }
        // The URL is never printed: it may hold a password.
        if options.catalogURL != nil { StandardOutput.write("catalogue: PostgreSQL (--catalog)\n") }
        if tokens == nil {
            StandardOutput.write("no token file: serving loopback clients only\n")
        } else {
            StandardOutput.write("bearer tokens for \(tokens?.names.count ?? 0) clients\n")
        }
        StandardOutput.write("listening on \(server.url)\n")
        ShutdownSignal.install()
        while !ShutdownSignal.requested.load(ordering: .relaxed) {
            try? await Task.sleep(for: .milliseconds(100))
        }
        server.stop()
        StandardOutput.write("stopped\n")
        return ExitStatus.success
    }

    /// `--catalog`: a `postgres://` or `postgresql://` URL (or libpq `key=value` pairs with `dbname=`).
    private static func catalogURL(_ parsed: Arguments) throws -> String? {
        guard let url = parsed.option("catalog") else { return nil }
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") || url.contains("dbname=") else {
            throw Arguments.UsageError(description: "--catalog takes a postgres:// or postgresql:// URL")
        }
        return url
    }

    private static func readPEM(_ path: FilePath) throws -> String {
        let descriptor = try Syscall.open(path, flags: O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        defer { Syscall.close(descriptor) }
        let status = try Syscall.fstat(descriptor, path: path.description)
        guard status.isRegularFile else { throw IOError(.notARegularFile, "\(path) is not a regular file") }
        return String(decoding: try Syscall.readAll(descriptor, limit: 1 << 20, path: path.description), as: UTF8.self)
    }
}

/// SIGTERM and SIGINT set a flag the serve loop polls (an atomic store is async-signal-safe).
enum ShutdownSignal {
    static let requested = Atomic<Bool>(false)

    static func install() {
        _ = signal(SIGTERM) { _ in ShutdownSignal.requested.store(true, ordering: .relaxed) }
        _ = signal(SIGINT) { _ in ShutdownSignal.requested.store(true, ordering: .relaxed) }
    }
}
