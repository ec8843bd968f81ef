import Foundation

/// The aggregate-analytics summary of one upload, and its exported form with Laplace noise.
///
/// Privacy (docs/UPLOADER.md): the export is ε = 1.0 differentially private for the one upload it describes
/// (local differential privacy: whatever the upload was, the exported numbers change their likelihood by at
/// most e^1). Each field is first clamped to a fixed range, so its sensitivity (the most one upload can move
/// it) is the range's width; the budget is split evenly over the five fields (sequential composition), so each
/// gets ε/5 = 0.2 and noise of scale width / 0.2. One upload's export says little; the means over many
/// uploads are unbiased (the noise has mean 0, though clamping biases values outside the ranges).
public struct UploadSummary: Sendable, Codable, Hashable {
    /// 1 when the upload completed and verified, else 0.
    public var completed: Double
    /// 1 when it resumed an earlier attempt, else 0.
    public var resumed: Double
    /// Retried attempts per chunk sent, clamped to 0...1.
    public var retryFraction: Double
    /// log10 of the mean throughput in bytes per second, clamped to 3...10 (1 kB/s ... 10 GB/s).
    public var log10Throughput: Double
    /// log10 of the upload's size in bytes, clamped to 0...13 (1 B ... 10 TB).
    public var log10Size: Double

    /// The privacy budget of one export.
    public static let epsilon = 1.0

    /// Each field's range, in declaration order; its width is the field's sensitivity.
    public static let ranges: [ClosedRange<Double>] = [0...1, 0...1, 0...1, 3...10, 0...13]

    /// The noise scale of each field: width x 5 / ε.
    public static var scales: [Double] {
        ranges.map { LaplaceNoise.scale(sensitivity: $0.upperBound - $0.lowerBound, epsilon: epsilon / 5) }
    }

    /// The summary of an upload (values clamped to their ranges; a size or rate of 0 counts as the floor).
    public init(
        completed: Bool, resumed: Bool, chunksSent: Int, retries: Int, bytes: UInt64, seconds: Double
    ) {
        let fields = [
            completed ? 1 : 0, resumed ? 1 : 0, chunksSent > 0 ? Double(retries) / Double(chunksSent) : 0,
            seconds > 0 && bytes > 0 ? log10(Double(bytes) / seconds) : 0, bytes > 0 ? log10(Double(bytes)) : 0,
        ]
        self.init(fields: fields)
    }

    private init(fields: [Double]) {
        let clamped = zip(fields, Self.ranges).map { value, range in
            value.isFinite ? min(max(value, range.lowerBound), range.upperBound) : range.lowerBound
        }
        completed = clamped[0]
        resumed = clamped[1]
        retryFraction = clamped[2]
        log10Throughput = clamped[3]
        log10Size = clamped[4]
    }

    /// The fields in declaration order.
    public var fields: [Double] { [completed, resumed, retryFraction, log10Throughput, log10Size] }

    /// The summary with Laplace noise of each field's scale added (not clamped again: clamping after the noise
    /// would bias the means). `generator` is the CSPRNG in production, a seeded one in tests.
    public func privatized(using generator: inout some RandomNumberGenerator) -> UploadSummary {
        var noisy = self
        let scales = Self.scales
        noisy.completed += LaplaceNoise.sample(scale: scales[0], using: &generator)
        noisy.resumed += LaplaceNoise.sample(scale: scales[1], using: &generator)
        noisy.retryFraction += LaplaceNoise.sample(scale: scales[2], using: &generator)
        noisy.log10Throughput += LaplaceNoise.sample(scale: scales[3], using: &generator)
        noisy.log10Size += LaplaceNoise.sample(scale: scales[4], using: &generator)
        return noisy
    }
}
