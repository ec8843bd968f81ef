/// Whether compressing a chunk pays (`docs/PROTOCOL.md` section 3.2): compress a sample (the first
/// `sampleSize` bytes, 32 KiB) at level 1 and pay only when it saves at least `minimumSaving` (10%).
package enum CompressionProbe {
    /// The sample's length.
    package static let sampleSize = 32 << 10
    /// The smallest saving that pays, as a fraction of the sample.
    package static let minimumSaving = 0.10

    /// The sample's compressed size over its size (0 ... ~1.0), or nil for an empty sample or a coder failure.
    package static func ratio(_ bytes: some Sequence<UInt8>, coding: ContentCoding) -> Double? {
        let sample = Array(bytes.prefix(sampleSize))
        guard !sample.isEmpty, let encoder = try? ContentEncoder(coding, level: 1),
            let body = try? encoder.update(sample), let tail = try? encoder.finish()
        else { return nil }
        return Double(body.count + tail.count) / Double(sample.count)
    }

    /// True when compressing `bytes` with `coding` saves at least 10% on the sample.
    package static func pays(_ bytes: some Sequence<UInt8>, coding: ContentCoding) -> Bool {
        guard let ratio = ratio(bytes, coding: coding) else { return false }
        return ratio <= 1 - minimumSaving
    }
}
