/// Arithmetic of a binary extension field GF(2^w), as the matrix code needs it.
///
/// Addition is XOR in every such field, so only multiplication and inversion are requirements.
protocol GaloisField {
    /// One field element, stored in the low `bitWidth` bits.
    associatedtype Element: FixedWidthInteger & UnsignedInteger & Sendable

    /// The number of elements, 2^w.
    static var order: Int { get }

    /// The product a * b.
    static func multiply(_ a: Element, _ b: Element) -> Element

    /// The multiplicative inverse of a nonzero element; `inverse(0)` is 0 (never used as a divisor).
    static func inverse(_ a: Element) -> Element
}
