/// The single pass over a chunk's bytes: SHA-256, CRC32C and the compressibility probe.
///
/// Both digests run over 128 KiB slices in turn, so the CRC reads each slice from L2 right after
/// SHA-256 pulled it in. Reuse one hasher per thread: it keeps a zlib stream whose ~256 KiB of state
/// would otherwise be allocated (and faulted in) for every chunk. Not `Sendable` for that reason.
public final class ChunkHasher {
    private let probe = DeflateProbe(maximumInput: IOConstants.compressibilitySampleSize)
    /// Whether `digest` runs the compressibility probe (when false, compressibility is 0).
    public let probesCompressibility: Bool

    /// A hasher; `probesCompressibility` turns the deflate sampling on (the default) or off.
    public init(probesCompressibility: Bool = true) {
        self.probesCompressibility = probesCompressibility
    }

    /// The digest of one chunk's bytes, in one pass.
    public func digest(index: Int, offset: Int64, bytes: UnsafeRawBufferPointer) -> ChunkDigest {
        let parts = unsafe digest(bytes)
        return ChunkDigest(
            index: index, offset: offset, length: bytes.count, sha256: parts.sha256, crc32c: parts.crc32c,
            compressibility: parts.compressibility)
    }

    /// The parts of a chunk digest that need the bytes.
    struct Parts {
        var sha256: Digest32
        var crc32c: UInt32
        var compressibility: Double
    }

    /// SHA-256, CRC32C and compressibility of `bytes` in one pass.
    func digest(_ bytes: UnsafeRawBufferPointer) -> Parts {
        var sha = SHA256()
        var crc = CRC32C()
        var start = 0
        while start < bytes.count {
            let end = min(start + IOConstants.hashSliceSize, bytes.count)
            let slice = unsafe UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            unsafe sha.update(slice)
            unsafe crc.update(slice)
            start = end
        }
        let compressibility = probesCompressibility ? unsafe compressibility(bytes) : 0
        return Parts(sha256: sha.finalize(), crc32c: crc.value, compressibility: compressibility)
    }

    /// CRC32C and compressibility only (the half of the work the other core does in `FileDigestStream`).
    func checksumAndProbe(_ bytes: UnsafeRawBufferPointer) -> (crc32c: UInt32, compressibility: Double) {
        var crc = CRC32C()
        unsafe crc.update(bytes)
        return (crc.value, probesCompressibility ? unsafe compressibility(bytes) : 0)
    }

    /// Mean fraction saved over the samples at offsets 0, 5 MiB, 10 MiB ... of `bytes`.
    ///
    /// Deflate runs at about 1/25 of SHA-256's speed on incompressible data, so a full 32 KiB sample
    /// per 4 MiB chunk would cost ~20% of the pass. Each sample therefore starts with its first 4 KiB:
    /// when that saves under 2% (already-compressed media, encrypted data) the sample is scored from
    /// it alone; otherwise the whole 32 KiB is compressed, which is quick on compressible bytes.
    func compressibility(_ bytes: UnsafeRawBufferPointer) -> Double {
        var saved = 0.0
        var samples = 0
        var start = 0
        while start < bytes.count {
            let end = min(start + IOConstants.compressibilitySampleSize, bytes.count)
            let headEnd = min(start + Self.probeHeadSize, end)
            let head = unsafe UnsafeRawBufferPointer(rebasing: bytes[start..<headEnd])
            if let compressed = unsafe probe.compressedSize(head) {
                var fraction = max(0, 1 - Double(compressed) / Double(head.count))
                if fraction >= Self.incompressibleBelow && headEnd < end {
                    let sample = unsafe UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                    if let compressed = unsafe probe.compressedSize(sample) {
                        fraction = max(0, 1 - Double(compressed) / Double(sample.count))
                    }
                }
                saved += fraction
                samples += 1
            }
            start += IOConstants.compressibilitySampleInterval
        }
        return samples == 0 ? 0 : saved / Double(samples)
    }

    /// Bytes compressed first to spot incompressible data cheaply.
    static let probeHeadSize = 4096
    /// Below this fraction saved on the head, a sample counts as incompressible.
    static let incompressibleBelow = 0.02
}
