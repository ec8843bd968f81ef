import AetherIO
import AetherReceiver
import AetherTestSupport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `aether-bench fleet`: the receiver's fleet mode against its embedded default, side by side in one run.
///
/// - `fleet_catalog_*`: catalogue operations per second for 64 concurrent uploads of small chunks, each thread
///   driving the `UploadCatalog` API with the calls one acknowledged native chunk makes (the open check's receipt
///   lookup, then under `serialized`: the record, the receipt again, `recordChunks`): PostgreSQL (a server started
///   by the bench, `fsync=off`) against SQLite (WAL, synchronous=FULL, on `/dev/shm`). Neither reaches a disk
///   flush, so the ratio is the engines' own cost. Also the single-thread latency of one chunk's mix.
/// - `fleet_native_*`: `aether upload --protocol native` of 1 GiB (`--size-mib`) on loopback through nginx into two
///   `aether serve --catalog postgres://... --blobs s3://...` (Ceph RGW, no `--dir`) against `aether serve --dir`
///   (tmpfs), alternating; the completion time and every process's CPU; where the time goes: the receivers' chunk
///   time (their `aether_chunk_seconds` histograms), the catalogue's share from the single-thread latency above,
///   the rest (S3) by difference.
///
/// Each line skips with the reason when PostgreSQL, Ceph RGW, nginx or `--blobs` is missing.
enum FleetBench: BenchSuite {
    static let name = "fleet"
    static let runsByDefault = false
    static let summary =
        "fleet_catalog (64 uploads: PostgreSQL vs SQLite ops/s), fleet_native (2 receivers, PostgreSQL+RGW vs --dir, 1 GiB)"

    static let uploads = 64
    static let chunksPerUpload = 40
    /// Catalogue calls one acknowledged chunk makes (see `acknowledge`).
    static let callsPerChunk = 4

    static func run(options: [String]) async throws {
        let postgres: PostgresProcess?
        if !PostgresProcess.isInstalled {
            print("fleet: skipped the PostgreSQL lines: PostgreSQL is not installed (make deps installs postgresql)")
            postgres = nil
        } else {
            do {
                postgres = try PostgresProcess()
            } catch {
                print("fleet: skipped the PostgreSQL lines: cannot start PostgreSQL: \(error)")
                postgres = nil
            }
        }
        defer { try? postgres?.stop() }
        guard let postgres else { return }
        let latency = try catalogueLines(postgres)
        try await nativeLines(postgres, catalogueSecondsPerChunk: latency, options: options)
    }

    // MARK: Catalogue operations

    /// Prints the two `fleet_catalog` lines; returns PostgreSQL's and SQLite's single-thread seconds per chunk.
    static func catalogueLines(_ postgres: PostgresProcess) throws -> (postgres: Double, sqlite: Double) {
        let base = "/dev/shm/aether-bench-fleet-\(getpid())"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let pg = try PostgresCatalog(url: try postgres.createDatabase())
        let sqlite = try SQLiteUploadCatalog(path: FilePath(base + "/catalog.sqlite3"))
        let chunks = uploads * chunksPerUpload
        let pgSeconds = try Measure.median(runs: 3, warmup: 1) { try drive(pg, threads: uploads) }
        let sqliteSeconds = try Measure.median(runs: 3, warmup: 1) { try drive(sqlite, threads: uploads) }
        let pgRate = Double(chunks * callsPerChunk) / pgSeconds
        let sqliteRate = Double(chunks * callsPerChunk) / sqliteSeconds
        print(
            "fleet: catalogue, \(uploads) concurrent uploads x \(chunksPerUpload) chunks, \(callsPerChunk) calls "
                + "per acknowledged chunk; load average \(IOBench.loadAverage())")
        Measure.line(
            "fleet_catalog_postgres_64", Measure.formatted(pgRate, decimals: 0) + " ops/s",
            ratios: [("ratio_vs_sqlite", pgRate / sqliteRate)])
        Measure.line("fleet_catalog_sqlite_64", Measure.formatted(sqliteRate, decimals: 0) + " ops/s", ratios: [])
        // One chunk's catalogue time with nothing else running: what each acknowledgement waits for.
        let single = 200
        let pgOne =
            try Measure.median(runs: 3, warmup: 1) { try drive(pg, threads: 1, chunks: single) } / Double(single)
        let sqliteOne =
            try Measure.median(runs: 3, warmup: 1) { try drive(sqlite, threads: 1, chunks: single) } / Double(single)
        print(
            Measure.pad("fleet_catalog_ms_per_chunk", 28)
                + Measure.pad("postgres=" + Measure.formatted(pgOne * 1000, decimals: 3), 18)
                + "sqlite=\(Measure.formatted(sqliteOne * 1000, decimals: 3))  (one thread)")
        return (pgOne, sqliteOne)
    }

    /// `threads` uploads, each acknowledging `chunks` chunks in order on a thread of its own.
    static func drive(_ catalog: any UploadCatalog, threads: Int, chunks: Int = chunksPerUpload) throws {
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for _ in 0..<threads {
            let id = try randomID()
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                do {
                    var record = newRecord(id, chunks: chunks)
                    try catalog.insert(record)
                    for index in 0..<chunks { try acknowledge(catalog, &record, index: index) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        if let first = failures.withLock({ $0.first }) { throw BenchError("catalogue: \(first)") }
    }

    /// The catalogue calls of one acknowledged native chunk, as `UploadEngine` makes them: the open check's
    /// receipt lookup, then under the upload's lock the record, the receipt again and the recording.
    static func acknowledge(_ catalog: any UploadCatalog, _ record: inout UploadRecord, index: Int)
        throws(ReceiverError)
    {
        guard try catalog.chunkReceipt(record.id, index: index) == nil else {
            throw ReceiverError(.storageFailed, "chunk \(index) was already stored")
        }
        let id = record.id
        let current = record
        record = try catalog.serialized(id) { () throws(ReceiverError) -> UploadRecord in
            guard var stored = try catalog.record(id), stored.state == .open else {
                throw ReceiverError(.notFound, "the upload vanished")
            }
            guard try catalog.chunkReceipt(id, index: index) == nil else {
                throw ReceiverError(.storageFailed, "chunk \(index) was stored meanwhile")
            }
            var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 32)
            bytes[0] = 1
            let digest = SHA256.hash(bytes)
            stored.updatedAt = current.updatedAt + 1
            stored.chainVerifiedThrough = index
            stored.chainLink = digest
            let receipt = ChunkReceipt(
                index: index, length: 256 * 1024, sha256: digest, crc32c: UInt32(index), link: digest, rebuilt: false)
            try catalog.recordChunks([receipt], upload: stored)
            return stored
        }
    }

    static func newRecord(_ id: UploadID, chunks: Int) -> UploadRecord {
        UploadRecord(
            id: id, owner: ClientIdentity("bench"), uploadProtocol: .native, state: .open,
            size: Int64(chunks) * 256 * 1024, chunkSize: 256 * 1024, chunks: chunks, chainSessionID: "bench",
            contentID: nil, parity: nil, metadata: [:], expectedSHA256: nil, concatenation: nil, offset: 0,
            chainVerifiedThrough: -1, chainLink: nil, createdAt: 1, updatedAt: 1)
    }

    /// A fresh upload id: 25 random base32 characters and a last one whose two low bits are zero.
    static func randomID() throws(ReceiverError) -> UploadID {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        let random = SecureRandom.bytes(26)
        var text = String(random.prefix(25).map { alphabet[Int($0 & 31)] })
        text.append(alphabet[Int(random[25] & 7) * 4])
        return try UploadID(text)
    }
}
