/// GF(2^16) with the primitive polynomial x^16 + x^12 + x^3 + x + 1 (0x1100B) and generator 2, for codes
/// of more than 256 shards.
///
/// 0x1100B is the usual primitive polynomial for w = 16 (the default of the gf-complete library); the
/// tests check that 2 generates all 65,535 nonzero elements, which is what "primitive" means. A symbol is
/// two bytes of a shard, little-endian, so shard lengths are even.
public enum GF65536: GaloisField {
    /// The field polynomial with its x^16 term.
    public static let polynomial: UInt32 = 0x1100B

    /// The number of elements.
    public static let order = 65536

    /// log[x] for x in 1...65535 (log[0] is unused and 0).
    static let logTable: [UInt16] = tables.log

    /// exp[i] = 2^i, stored twice over so log a + log b needs no reduction.
    static let expTable: [UInt16] = tables.exp

    private static let tables: (log: [UInt16], exp: [UInt16]) = {
        var log = [UInt16](repeating: 0, count: 65536)
        var exp = [UInt16](repeating: 0, count: 2 * 65535)
        var x: UInt32 = 1
        for power in 0..<65535 {
            log[Int(x)] = UInt16(power)
            exp[power] = UInt16(x)
            exp[power + 65535] = UInt16(x)
            x <<= 1
            if x & 0x10000 != 0 { x ^= polynomial }
        }
        return (log, exp)
    }()

    /// The product a * b.
    public static func multiply(_ a: UInt16, _ b: UInt16) -> UInt16 {
        guard a != 0, b != 0 else { return 0 }
        return expTable[Int(logTable[Int(a)]) + Int(logTable[Int(b)])]
    }

    /// The inverse of a nonzero element; `inverse(0)` is 0.
    public static func inverse(_ a: UInt16) -> UInt16 {
        guard a != 0 else { return 0 }
        return expTable[65535 - Int(logTable[Int(a)])]
    }

    /// The product by shift-and-XOR, independent of the tables.
    public static func multiplyBitwise(_ a: UInt16, _ b: UInt16) -> UInt16 {
        var product: UInt32 = 0
        var x = UInt32(a)
        var y = b
        while y != 0 {
            if y & 1 != 0 { product ^= x }
            x <<= 1
            if x & 0x10000 != 0 { x ^= polynomial }
            y >>= 1
        }
        return UInt16(product)
    }
}
