import AetherIO
import AetherUploader
import Foundation

/// `vault`: one `SnapshotVault.store` (seal under the per-upload key, atomic write: temporary file, fsync,
/// rename, fsync of the directory) against the same atomic write of the plaintext without encryption, in a
/// state directory under the system temporary directory. The resume manager stores after every acknowledged
/// chunk, so the figure to compare is stores per second against chunk acknowledgements per second.
enum VaultBench: BenchSuite {
    static let name = "vault"
    static let runsByDefault = true
    static let summary = "resume snapshot store (AES-256-GCM + atomic write) against a plain atomic write"

    static func run(options: [String]) async throws {
        let root = FilePath("/tmp/aether-vault-bench-\(Hex.encode(SecureRandom.bytes(6)))")
        let state = try UploadStateDirectory(path: root)
        let vault = try SnapshotVault(stateDirectory: state)
        defer { remove(root) }
        for size in [1024, 64 * 1024, 1024 * 1024] {
            let snapshot = [UInt8](repeating: 0x42, count: size)
            var failure: (any Error)?
            let ours = Measure.median(runs: 9, warmup: 2) {
                for _ in 0..<20 {
                    do { try vault.store(snapshot, for: "bench") } catch { failure = error }
                }
            }
            let plainPath = root.appending("plain.bin")
            let baseline = Measure.median(runs: 9, warmup: 2) {
                for _ in 0..<20 {
                    do { try AtomicFile.write(snapshot, to: plainPath, options: .secret) } catch { failure = error }
                }
            }
            if let failure { throw BenchError("vault store failed: \(failure)") }
            guard case .snapshot(let back) = try vault.load(key: "bench"), back == snapshot else {
                throw BenchError("the stored snapshot did not load back")
            }
            let perStore = ours / 20
            Measure.line(
                "vault store \(size / 1024)KiB",
                Measure.formatted(perStore * 1e3, decimals: 3) + " ms",
                ratios: [
                    ("stores_per_s", 1 / perStore), ("ratio_vs_plain_atomic_write", ours / baseline),
                ])
        }
    }

    private static func remove(_ root: FilePath) {
        try? FileManager.default.removeItem(atPath: root.description)
    }
}
