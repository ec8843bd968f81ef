import Foundation

/// Samples of the Laplace distribution with mean 0 and scale b (density exp(-|x|/b) / 2b, mean |x| = b, variance
/// 2b^2), the noise of the Laplace mechanism: a statistic with sensitivity Δ released with noise of scale Δ/ε is
/// ε-differentially private (Dwork, McSherry, Nissim and Smith, 2006).
public enum LaplaceNoise {
    /// One sample of scale `scale` (> 0) by inversion: u uniform on (0, 1), x = b ln(2u) below one half and
    /// -b ln(2 - 2u) above. `generator` is the CSPRNG in production (`SecureRandom`), a seeded one in tests.
    public static func sample(scale: Double, using generator: inout some RandomNumberGenerator) -> Double {
        // 52 random bits, centred in their interval: u = (k + 1/2) / 2^52 is exact in a Double (53 significant
        // bits), never 0 or 1, so both logarithms stay finite (|x| <= 52 b ln 2).
        let bits = generator.next() >> 12
        let u = (Double(bits) + 0.5) / 4_503_599_627_370_496.0
        return u < 0.5 ? scale * log(2 * u) : -scale * log(2 - 2 * u)
    }

    /// The scale for a statistic of sensitivity `sensitivity` released under privacy budget `epsilon`.
    public static func scale(sensitivity: Double, epsilon: Double) -> Double { sensitivity / epsilon }
}
