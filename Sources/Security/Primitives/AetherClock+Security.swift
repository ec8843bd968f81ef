public import AetherIO
public import FoundationEssentials

extension AetherClock {
    /// The wall reading as a `Date` (pin rotation windows, challenge expiry, certificate validity).
    public func wallDate() -> Date {
        let nanoseconds = wallNanoseconds()
        let seconds = AetherTime.floorDivide(nanoseconds, 1_000_000_000)
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds - seconds * 1_000_000_000) / 1e9)
    }

    /// The wall reading as a key timestamp: milliseconds since the epoch, 0 for a reading before 1970.
    public func keyTimestamp() -> KeyTimestamp {
        KeyTimestamp(millisecondsSinceEpoch: UInt64(clamping: max(0, wallMilliseconds())))
    }
}
