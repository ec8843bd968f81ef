import AetherIO

/// The result of comparing two hex strings (BUG-18): "could not compare" is never reported as
/// "not equal", so a caller cannot mistake a corrupt record for a genuine mismatch, or the reverse.
public enum HexComparison: Sendable, Hashable {
    /// Both parsed and the bytes are equal.
    case equal
    /// Both parsed and the bytes differ (compared in constant time).
    case notEqual
    /// One side is not valid hex; the message says which.
    case parseError(String)

    /// Compares two hex strings (either case) by their bytes, in constant time for equal lengths.
    public static func compare(_ lhs: String, _ rhs: String) -> HexComparison {
        let left: [UInt8]
        let right: [UInt8]
        do { left = try Hex.decode(lhs) } catch { return .parseError("left side: \(error.message)") }
        do { right = try Hex.decode(rhs) } catch { return .parseError("right side: \(error.message)") }
        return ConstantTime.equals(left, right) ? .equal : .notEqual
    }
}
