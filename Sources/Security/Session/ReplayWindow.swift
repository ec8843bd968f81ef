/// The 4,096-wide anti-replay window of one receiving direction.
///
/// Counter `c` is accepted iff `c < 2^32`, it was not accepted before, and nothing was accepted yet or
/// `c > last` or `last - c < 4096` (`last` = highest accepted). Callers check with `wouldAccept`
/// before the AEAD and `mark` only after it succeeds. One allocation at creation, none per record.
public struct ReplayWindow: Sendable {
    /// How many counters at and below the highest one can still be accepted.
    public static let width: UInt64 = 4_096
    private static let words = Int(width / 64)

    private var bits: [UInt64]
    /// The highest accepted counter, nil while none was accepted.
    public private(set) var highest: UInt64?

    /// An empty window.
    public init() { bits = [UInt64](repeating: 0, count: Self.words) }

    /// Whether `counter` would be accepted now. Changes nothing.
    public func wouldAccept(_ counter: UInt64) -> Bool {
        guard counter < SessionWire.counterLimit else { return false }
        guard let highest else { return true }
        if counter > highest { return true }
        if highest - counter >= Self.width { return false }
        return !isSet(counter)
    }

    /// Accepts `counter` if `wouldAccept` allows it and returns whether it did.
    /// Call only for a record whose AEAD verified.
    @discardableResult
    public mutating func mark(_ counter: UInt64) -> Bool {
        guard wouldAccept(counter) else { return false }
        if let highest, counter > highest {
            if counter - highest >= Self.width {
                for index in 0..<Self.words { bits[index] = 0 }
            } else {
                // The slots of (highest, counter] held counters now out of the window.
                var slot = highest + 1
                while slot <= counter {
                    clear(slot)
                    slot += 1
                }
            }
        }
        if highest.map({ counter > $0 }) ?? true { highest = counter }
        let position = Int(counter % Self.width)
        bits[position >> 6] |= 1 << UInt64(position & 63)
        return true
    }

    private func isSet(_ counter: UInt64) -> Bool {
        let position = Int(counter % Self.width)
        return bits[position >> 6] & (1 << UInt64(position & 63)) != 0
    }

    private mutating func clear(_ counter: UInt64) {
        let position = Int(counter % Self.width)
        bits[position >> 6] &= ~(1 << UInt64(position & 63))
    }
}
