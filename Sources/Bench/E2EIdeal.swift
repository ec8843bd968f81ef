import AetherLinkLab

/// The yardsticks of `aether-bench e2e`'s link-lab lines, pure functions of the uplink's configuration.
///
/// The ideal of a client is the file's bytes at the link's mean rate over that client's own span: the trace's
/// capacity integrated over exactly the seconds it ran, from the offset (after the lab's clock zero) where it
/// started, so a client that happened to meet a dip is not charged for it and one that met a peak gets no credit.
/// Its ratio to the ideal is then that capacity over the file's bits. Rates count IP bytes and the path changes'
/// windows are not taken out, so a client that filled the link would still land above 1 (1500/1448 for the
/// headers, and the share of the span the windows cut).
enum E2EIdeal {
    /// Bits the uplink could carry from `offset` to `offset + seconds` after the lab's clock zero.
    static func capacityBits(_ uplink: LinkLabDirection, offset: Double, seconds: Double) -> Double {
        uplink.capacityMegabits(from: offset, to: offset + seconds) * 1e6
    }

    /// Seconds `bytes` take at the mean rate the uplink offered over the span (nil when it offered nothing).
    static func idealSeconds(bytes: Int64, _ uplink: LinkLabDirection, offset: Double, seconds: Double) -> Double? {
        let capacity = capacityBits(uplink, offset: offset, seconds: seconds)
        guard capacity > 0, seconds > 0 else { return nil }
        return Double(bytes) * 8 / (capacity / seconds)
    }

    /// A span's length over its ideal: the capacity the span offered over the file's bits.
    static func ratioToIdeal(bytes: Int64, _ uplink: LinkLabDirection, offset: Double, seconds: Double) -> Double {
        capacityBits(uplink, offset: offset, seconds: seconds) / (Double(bytes) * 8)
    }

    /// The seconds from `offset` by which the uplink could have carried `bytes` (nil past `limit` seconds): where a
    /// client's cap is set before it runs.
    static func secondsToCarry(bytes: Int64, _ uplink: LinkLabDirection, offset: Double, limit: Double = 86_400)
        -> Double?
    {
        let bits = Double(bytes) * 8
        // The capacity grows with the span: double to a span that carries the bytes, then bisect to a microsecond.
        var high = 1.0
        while capacityBits(uplink, offset: offset, seconds: high) < bits {
            guard high < limit else { return nil }
            high = min(2 * high, limit)
        }
        var low = 0.0
        while high - low > 1e-6 {
            let middle = (low + high) / 2
            if capacityBits(uplink, offset: offset, seconds: middle) >= bits { high = middle } else { low = middle }
        }
        return high
    }

    /// The link limit of a steady lossy link: the bytes at `megabitsPerSecond` less the share `lossRate` loses.
    static func steadyLimit(bytes: Int64, megabitsPerSecond: Double, lossRate: Double) -> Double {
        Double(bytes) * 8 / (megabitsPerSecond * 1e6 * (1 - lossRate))
    }
}
