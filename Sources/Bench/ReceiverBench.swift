import AetherIO
import AetherIntegrity
import AetherReceiver
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `aether-bench receiver-engine`: the receiver's engine ingesting a 1 GiB native upload of 8 MiB chunks into a store
/// on tmpfs (`/dev/shm`), every chunk verified (length, SHA-256, CRC32C), fsync'ed and committed to SQLite; against
/// a plain write + fsync of the same chunk files in the same run.
enum ReceiverBench: BenchSuite {
    static let name = "receiver-engine"
    static let runsByDefault = false
    static let summary = "receiver engine ingest of 1 GiB in 8 MiB chunks on /dev/shm vs plain write+fsync"

    static let chunkSize = 8 << 20
    static let chunkCount = 128
    static let pieceSize = 256 * 1024

    static func run(options: [String]) async throws {
        let base = "/dev/shm/aether-receiver-bench-\(getpid())"
        var template = SecureRandom.bytes(chunkSize)
        var chunks: [(bytes: [UInt8], descriptor: ChunkDescriptor)] = []
        // Distinct chunks without 1 GiB in memory: eight distinct buffers, reused.
        for variant in 0..<8 {
            template[0] = UInt8(variant)
            chunks.append(
                (
                    template,
                    ChunkDescriptor(length: chunkSize, crc32c: CRC32C.checksum(template), sha256: SHA256.hash(template))
                ))
        }
        let total = chunkSize * chunkCount
        var run = 0
        func fresh() throws -> String {
            run += 1
            let directory = base + "-\(run)"
            try Syscall.mkdir(directory, mode: 0o700)
            return directory
        }
        defer { _ = unsafe system("rm -rf \(base)-*") }

        for threads in [1, 4] {
            let engineSeconds = try Measure.median(runs: 3, warmup: 1) {
                let directory = try fresh()
                try ingest(into: directory, chunks: chunks, threads: threads)
                _ = unsafe system("rm -rf \(directory)")
            }
            let plainSeconds = try Measure.median(runs: 3, warmup: 1) {
                let directory = try fresh()
                try plainWrite(into: directory, chunks: chunks, threads: threads)
                _ = unsafe system("rm -rf \(directory)")
            }
            Measure.line(
                "receiver_engine_ingest_t\(threads)", Measure.rate(bytes: total, seconds: engineSeconds),
                ratios: [("ratio_vs_write_fsync", plainSeconds / engineSeconds)])
            Measure.line("plain_write_fsync_t\(threads)", Measure.rate(bytes: total, seconds: plainSeconds), ratios: [])
        }
        // CPU cost of the engine alone (user + system seconds per GiB), one thread.
        let before = cpuSeconds()
        let directory = try fresh()
        try ingest(into: directory, chunks: chunks, threads: 1)
        let engineCPU = cpuSeconds() - before
        _ = unsafe system("rm -rf \(directory)")
        print(Measure.pad("receiver_engine_cpu", 28) + Measure.formatted(engineCPU, decimals: 2) + " s/GiB")
    }

    private static func cpuSeconds() -> Double {
        var usage = rusage()
        _ = unsafe getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// Chunk indices `0..<chunkCount` spread over `threads` workers, each running `body` on its share.
    private static func parallel(threads: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            do {
                for index in stride(from: worker, to: chunkCount, by: threads) { try body(index) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        if let first = failures.withLock({ $0.first }) { throw BenchError(first) }
    }

    private static func ingest(
        into directory: String, chunks: [(bytes: [UInt8], descriptor: ChunkDescriptor)], threads: Int
    )
        throws
    {
        let engine = try UploadEngine(directory: FilePath(directory))
        let owner = ClientIdentity("bench")
        var link = ChunkCommitmentChain.genesis(sessionID: "bench")
        var descriptors: [ChunkDescriptor] = []
        for index in 0..<chunkCount {
            var descriptor = chunks[index % chunks.count].descriptor
            link = ChunkCommitmentChain.link(chunkHash: descriptor.sha256, previous: link)
            descriptor.link = link
            descriptors.append(descriptor)
        }
        let record = try engine.create(
            NewUpload(
                uploadProtocol: .native, size: Int64(chunkSize * chunkCount), chunkSize: chunkSize, chunks: chunkCount,
                chainSessionID: "bench"), owner: owner)
        let sendable = descriptors
        try parallel(threads: threads) { index in
            let sink = try engine.openChunk(record.id, index: index, descriptor: sendable[index], owner: owner)
            try unsafe chunks[index % chunks.count].bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let end = min(offset + pieceSize, raw.count)
                    try unsafe sink.write(UnsafeRawBufferPointer(rebasing: raw[offset..<end]))
                    offset = end
                }
            }
            guard try sink.finish() == .stored else { throw BenchError("chunk \(index) not stored") }
        }
        guard try engine.status(record.id, owner: owner).record.chainVerifiedThrough == chunkCount - 1 else {
            throw BenchError("the chain was not verified through the last chunk")
        }
    }

    private static func plainWrite(
        into directory: String, chunks: [(bytes: [UInt8], descriptor: ChunkDescriptor)], threads: Int
    )
        throws
    {
        try parallel(threads: threads) { index in
            let path = directory + "/\(index)"
            let descriptor = try Syscall.open(path, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
            defer { Syscall.close(descriptor) }
            try unsafe chunks[index % chunks.count].bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let end = min(offset + pieceSize, raw.count)
                    try unsafe Syscall.writeFully(
                        descriptor, from: UnsafeRawBufferPointer(rebasing: raw[offset..<end]), path: path)
                    offset = end
                }
            }
            try Syscall.fsync(descriptor, path: path)
        }
    }
}
