import FoundationEssentials

/// The received-chunk bitmap of the status document (`docs/PROTOCOL.md` section 3.5): `count` bits, bit `i` in
/// byte `i / 8` at position `i % 8` (least significant first), standard base64 with padding; bits past `count`
/// are zero.
package struct ChunkBitmap: Sendable, Hashable {
    /// The number of bits.
    package let count: Int
    /// The packed bytes (`(count + 7) / 8` of them).
    package private(set) var bytes: [UInt8]

    /// An all-clear bitmap of `count` bits (0 ... `AetherWire.maximumChunks * 256`).
    package init(count: Int) {
        self.count = max(0, count)
        self.bytes = [UInt8](repeating: 0, count: (self.count + 7) / 8)
    }

    /// A bitmap with the given indices set; indices outside `0..<count` are ignored.
    package init(count: Int, set indices: some Sequence<Int>) {
        self.init(count: count)
        for index in indices { self[index] = true }
    }

    /// Parses the base64 text for `count` bits: the decoded length must be `(count + 7) / 8` and the bits past
    /// `count` clear. `member` names the JSON member in errors.
    package init(base64 text: String, count: Int, member: String = "received") throws(AetherProtocolError) {
        let expected = (count + 7) / 8
        guard count >= 0, text.utf8.count <= (expected + 2) / 3 * 4 + 4 else {
            throw AetherProtocolError(.inconsistent, member: member, "the bitmap is longer than \(count) bits")
        }
        guard let data = Data(base64Encoded: text), data.base64EncodedString() == text else {
            throw AetherProtocolError(.malformed, member: member, "the bitmap is not canonical base64")
        }
        guard data.count == expected else {
            throw AetherProtocolError(
                .inconsistent, member: member, "the bitmap has \(data.count) bytes, \(count) bits need \(expected)")
        }
        self.count = count
        self.bytes = Array(data)
        if count % 8 != 0, let last = bytes.last, last >> (count % 8) != 0 {
            throw AetherProtocolError(.inconsistent, member: member, "the bitmap has bits set past \(count)")
        }
    }

    /// Bit `index`; false outside `0..<count`. Setting outside the range does nothing.
    package subscript(index: Int) -> Bool {
        get { index >= 0 && index < count && bytes[index / 8] & (1 << (index % 8)) != 0 }
        set {
            guard index >= 0, index < count else { return }
            if newValue { bytes[index / 8] |= 1 << (index % 8) } else { bytes[index / 8] &= ~(1 << (index % 8)) }
        }
    }

    /// The indices whose bit is set, ascending.
    package var setIndices: [Int] { (0..<count).filter { self[$0] } }

    /// The number of bits set.
    package var setCount: Int { bytes.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// The number of set bits from index 0 before the first clear one.
    package var prefix: Int {
        var index = 0
        while index < count, self[index] { index += 1 }
        return index
    }

    /// The base64 text.
    package var base64: String { Data(bytes).base64EncodedString() }
}
