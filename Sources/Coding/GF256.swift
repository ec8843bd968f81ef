/// GF(2^8) with the polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11D) and generator 2, through log and
/// antilog tables (spec: "GF lookup table implementation guidance").
///
/// This is the field of ISA-L (`gf_mul`, `gf_inv`), which is what makes Aether's parity byte-identical
/// to `ec_encode_data`.
public enum GF256: GaloisField {
    /// The field polynomial with its x^8 term.
    public static let polynomial: UInt16 = 0x11D

    /// The number of elements.
    public static let order = 256

    /// log[x] for x in 1...255 (log[0] is unused and 0).
    static let logTable: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        var x: UInt16 = 1
        for power in 0..<255 {
            table[Int(x)] = UInt8(power)
            x = stepped(x)
        }
        return table
    }()

    /// exp[i] = 2^i, stored twice over (510 entries) so log a + log b needs no reduction.
    static let expTable: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 510)
        var x: UInt16 = 1
        for power in 0..<255 {
            table[power] = UInt8(x)
            table[power + 255] = UInt8(x)
            x = stepped(x)
        }
        return table
    }()

    /// The full 256 x 256 product table (64 KiB): row c holds c * x for every x. The portable region
    /// kernel reads one row per coefficient, one lookup a byte.
    static let productTable: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256 * 256)
        for a in 1..<256 {
            for b in 1..<256 {
                table[a << 8 | b] = expTable[Int(logTable[a]) + Int(logTable[b])]
            }
        }
        return table
    }()

    private static func stepped(_ x: UInt16) -> UInt16 {
        let doubled = x << 1
        return doubled & 0x100 != 0 ? doubled ^ polynomial : doubled
    }

    /// The product a * b.
    public static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        guard a != 0, b != 0 else { return 0 }
        return expTable[Int(logTable[Int(a)]) + Int(logTable[Int(b)])]
    }

    /// The inverse of a nonzero element; `inverse(0)` is 0, as in ISA-L's `gf_inv`.
    public static func inverse(_ a: UInt8) -> UInt8 {
        guard a != 0 else { return 0 }
        return expTable[255 - Int(logTable[Int(a)])]
    }

    /// 2 raised to `exponent`.
    public static func exp(_ exponent: Int) -> UInt8 {
        let reduced = exponent % 255
        return expTable[reduced < 0 ? reduced + 255 : reduced]
    }

    /// The product by shift-and-XOR, independent of the tables (tests check the tables against it).
    public static func multiplyBitwise(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var product: UInt16 = 0
        var x = UInt16(a)
        var y = b
        while y != 0 {
            if y & 1 != 0 { product ^= x }
            x = stepped(x)
            y >>= 1
        }
        return UInt8(product)
    }
}
