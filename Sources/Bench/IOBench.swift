import AetherIO
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `aether-bench io`: the AetherIO targets of issue 2, on a page-cached 1 GiB file made in /tmp.
///
/// (a) single-pass SHA-256+CRC32C on one core vs OpenSSL SHA-256 alone on the same buffers (>= 0.90)
/// (b) per-chunk SHA-256+CRC32C on both cores vs one-core OpenSSL SHA-256 (>= 1.7)
/// (c) `aether digest` wall time vs `openssl dgst -sha256` as child processes on the file (<= 1.1)
/// (d) CRC32C on 1 MiB buffers vs the single-stream hardware loop (>= 2.2)
/// (e) peak RSS of `aether digest` on a 4 GiB sparse file (< 64 MiB + prefetch buffers)
enum IOBench: BenchSuite {
    static let name = "io"
    static let runsByDefault = true
    static let summary = "chunk reading (pread, mmap, io_uring) and one-pass digests of a 1 GiB file"

    static let fileSize = 1 << 30
    static let chunkSize = ChunkReadOptions.defaultChunkSize

    static func run(options: [String]) async throws {
        let path = "/tmp/aether-bench-io-\(getpid()).bin"
        let sparsePath = "/tmp/aether-bench-io-sparse-\(getpid()).bin"
        defer {
            _ = unsafe unlink(path)
            _ = unsafe unlink(sparsePath)
        }
        print("io: load average at the start \(loadAverage()) on \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) cores")
        let aether = IOBaseline.executableDirectory() + "/aether"
        let haveAether = unsafe access(aether, X_OK) == 0
        if !haveAether { print("aether digest: skipped, \(aether) is not built (run `swift build -c release`)") }
        // (e) first, while this process is small: posix_spawn shares our memory until exec, and Linux
        // folds the parent's peak RSS into the child's ru_maxrss.
        if haveAether { try peakResidentSize(aether: aether, sparsePath: sparsePath) }
        try makeRandomFile(path, size: fileSize)
        do {
            let chunks = try loadChunks(path)
            singleCore(chunks)
            bothCores(chunks)
        }
        crc32cOnly()
        // (c) last: right after a gigabyte was written (and 4 GiB of sparse pages cached for (e)) the
        // kernel's background work on the page cache steals CPU for a while, which a two-thread
        // process feels more than a one-thread one.
        if haveAether { try digestCommand(aether: aether, path: path) }
        print("io: load average at the end \(loadAverage()) on \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) cores")
    }

    // /proc/loadavg's first three fields: other processes on the machine skew two-core results.
    static func loadAverage() -> String {
        guard let file = unsafe fopen("/proc/loadavg", "r") else { return "unknown" }
        defer { unsafe fclose(file) }
        var buffer = [CChar](repeating: 0, count: 128)
        guard unsafe fgets(&buffer, Int32(buffer.count), file) != nil else { return "unknown" }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    // Fills `path` with random bytes, chunk by chunk, so it ends up in the page cache.
    static func makeRandomFile(_ path: String, size: Int) throws {
        let descriptor = unsafe open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw BenchError("cannot create \(path)") }
        defer { close(descriptor) }
        var block = SecureRandom.bytes(chunkSize)
        var written = 0
        while written < size {
            // Vary each block cheaply so chunks differ (dedup or caching must not help anyone).
            unsafe block.withUnsafeMutableBytes { raw in
                unsafe raw.storeBytes(of: UInt64(written), toByteOffset: 0, as: UInt64.self)
            }
            // The last block only as far as `size` (a file of 40 KiB is 40 KiB, not a whole block).
            let want = min(chunkSize, size - written)
            let count = unsafe block.withUnsafeBytes { unsafe write(descriptor, $0.baseAddress, want) }
            guard count == want else { throw BenchError("short write to \(path)") }
            written += count
        }
        // Flush now: writeback of a gigabyte of dirty pages would otherwise steal a core mid-measurement.
        guard fsync(descriptor) == 0 else { throw BenchError("fsync of \(path) failed") }
    }

    // The file's chunks in memory (the "same buffers" both sides of (a) and (b) hash).
    static func loadChunks(_ path: String) throws -> [[UInt8]] {
        let reader = try FileChunkReader(path: path, options: ChunkReadOptions(chunkSize: chunkSize))
        var chunks: [[UInt8]] = []
        while let chunk = try reader.next() { chunks.append(chunk.bytes) }
        return chunks
    }

    static func opensslPass(_ chunks: [[UInt8]]) {
        var sink: UInt8 = 0
        for chunk in chunks { sink ^= unsafe chunk.withUnsafeBytes { unsafe OpenSSLBaseline.opensslSHA256($0) } }
        blackHole(sink)
    }

    // (a)
    static func singleCore(_ chunks: [[UInt8]]) {
        let bytes = chunks.count * chunkSize
        let hasher = ChunkHasher(probesCompressibility: false)
        let prober = ChunkHasher()
        var baseline: [Double] = []
        var ours: [Double] = []
        var withProbe: [Double] = []
        // Interleave the runs so background load hits both sides alike.
        for round in 0..<7 {
            let measure = { (body: () -> Void) -> Double in
                let start = Measure.now()
                body()
                return Measure.now() - start
            }
            let a = measure { opensslPass(chunks) }
            let b = measure { digestPass(chunks, hasher) }
            let c = measure { digestPass(chunks, prober) }
            if round > 0 {
                baseline.append(a)
                ours.append(b)
                withProbe.append(c)
            }
        }
        let base = median(baseline)
        Measure.line("openssl_sha256 (1 core)", Measure.rate(bytes: bytes, seconds: base), ratios: [])
        Measure.line(
            "sha256+crc32c (1 core)", Measure.rate(bytes: bytes, seconds: median(ours)),
            ratios: [("ratio_vs_openssl_sha256", pairedRatio(baseline, ours))])
        Measure.line(
            "sha256+crc32c+probe", Measure.rate(bytes: bytes, seconds: median(withProbe)),
            ratios: [("ratio_vs_openssl_sha256", pairedRatio(baseline, withProbe))])
    }

    static func digestPass(_ chunks: [[UInt8]], _ hasher: ChunkHasher, stride: Int = 1, start: Int = 0) {
        var sink: UInt32 = 0
        var index = start
        while index < chunks.count {
            let digest = unsafe chunks[index].withUnsafeBytes { raw in
                unsafe hasher.digest(index: index, offset: 0, bytes: raw)
            }
            sink ^= digest.crc32c
            index += stride
        }
        blackHole(UInt8(truncatingIfNeeded: sink))
    }

    // (b)
    static func bothCores(_ chunks: [[UInt8]]) {
        let bytes = chunks.count * chunkSize
        let shared = SendableChunks(chunks: chunks)
        var baseline: [Double] = []
        var ours: [Double] = []
        for round in 0..<7 {
            var start = Measure.now()
            opensslPass(chunks)
            let a = Measure.now() - start
            start = Measure.now()
            let group = DispatchGroup()
            for worker in 0..<2 {
                DispatchQueue.global().async(group: group) {
                    digestPass(shared.chunks, ChunkHasher(), stride: 2, start: worker)
                }
            }
            group.wait()
            let b = Measure.now() - start
            if round > 0 {
                baseline.append(a)
                ours.append(b)
            }
        }
        Measure.line(
            "per-chunk digests (2 cores)", Measure.rate(bytes: bytes, seconds: median(ours)),
            ratios: [("ratio_vs_openssl_sha256_1core", pairedRatio(baseline, ours))])
    }

    // (d)
    static func crc32cOnly() {
        let buffer = SecureRandom.bytes(1 << 20)
        let repeats = 1024
        var sink: UInt32 = 0
        var serial: [Double] = []
        var ours: [Double] = []
        for round in 0..<9 {
            var start = Measure.now()
            unsafe buffer.withUnsafeBytes { raw in
                for _ in 0..<repeats { sink ^= unsafe IOBaseline.serialCRC32C(0xFFFF_FFFF, raw) }
            }
            let a = Measure.now() - start
            start = Measure.now()
            unsafe buffer.withUnsafeBytes { raw in
                for _ in 0..<repeats {
                    var crc = CRC32C()
                    unsafe crc.update(raw)
                    sink ^= crc.value
                }
            }
            let b = Measure.now() - start
            if round > 0 {
                serial.append(a)
                ours.append(b)
            }
        }
        blackHole(UInt8(truncatingIfNeeded: sink))
        let bytes = repeats << 20
        Measure.line("crc32c_serial_hw (1 MiB)", Measure.rate(bytes: bytes, seconds: median(serial)), ratios: [])
        Measure.line(
            "crc32c (1 MiB)", Measure.rate(bytes: bytes, seconds: median(ours)),
            ratios: [("ratio_vs_serial_hw", pairedRatio(serial, ours))])
    }

    // (c)
    static func digestCommand(aether: String, path: String) throws {
        let candidates: [String] = ["/usr/bin/openssl", "/bin/openssl"]
        let openssl = candidates.first { path in unsafe access(path, X_OK) == 0 }
        if let openssl {
            var ours: [Double] = []
            var theirs: [Double] = []
            for round in 0..<10 {
                let a = IOBaseline.run([openssl, "dgst", "-sha256", path])
                let b = IOBaseline.run([aether, "digest", path])
                guard a.status == 0, b.status == 0 else {
                    throw BenchError("digest runs failed: openssl \(a.status), aether \(b.status)")
                }
                if round > 0 {
                    theirs.append(a.seconds)
                    ours.append(b.seconds)
                }
            }
            Measure.line(
                "openssl dgst -sha256 (1 GiB)", Measure.formatted(median(theirs), decimals: 3) + " s", ratios: [])
            Measure.line(
                "aether digest (1 GiB)", Measure.formatted(median(ours), decimals: 3) + " s",
                ratios: [("time_ratio_vs_openssl_dgst", pairedRatio(ours, theirs))])
        } else {
            print("aether digest vs openssl: skipped, no openssl executable")
        }
    }

    // (e)
    static func peakResidentSize(aether: String, sparsePath: String) throws {
        // A 4 GiB sparse file: every byte is read, so RSS shows whether anything holds the file.
        let descriptor = unsafe open(sparsePath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0, ftruncate(descriptor, 4 << 30) == 0 else {
            throw BenchError("cannot create \(sparsePath)")
        }
        close(descriptor)
        let run = IOBaseline.run([aether, "digest", sparsePath])
        guard run.status == 0 else { throw BenchError("aether digest on the sparse file exited \(run.status)") }
        let prefetchMiB = IOConstants.prefetchChunkCount * chunkSize >> 20
        let limitMiB = 64 + prefetchMiB
        // The child's figure is max(its own peak, ours at spawn time), so it is an upper bound.
        Measure.line(
            "aether digest peak RSS (4 GiB)",
            Measure.formatted(Double(run.peakResidentKiB) / 1024, decimals: 1) + " MiB",
            ratios: [
                ("limit_mib", Double(limitMiB)),
                ("fraction_of_limit", Double(run.peakResidentKiB) / 1024 / Double(limitMiB)),
                ("bench_own_peak_mib", Double(IOBaseline.ownPeakResidentKiB()) / 1024),
            ])
    }

    /// The median over rounds of baseline time / our time, each pair measured back to back, so a
    /// load spike from other processes hits both sides of a pair rather than skewing one median.
    static func pairedRatio(_ baseline: [Double], _ ours: [Double]) -> Double {
        median(zip(baseline, ours).map { $0 / $1 })
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    @inline(never) static func blackHole(_ value: UInt8) {
        if value == 0x5A && Measure.now() < 0 { print(value) }
    }

    /// The loaded chunks, read-only, shared with the two worker threads of (b).
    struct SendableChunks: Sendable {
        let chunks: [[UInt8]]
    }
}
