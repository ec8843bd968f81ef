public import AetherIO

/// The key store file format, version 1 (docs/KEY-STORE.md). Pure: bytes in, item or damage out.
///
/// ```
/// offset  size  field
///      0     8  magic "AETHKEYS"
///      8     2  version, big-endian (1)
///     10     2  key count n, big-endian (0...16)
///     12    16  host id
///     28  64*n  entries: key id (16), state (1: 1 pending, 2 active, 3 unlisted), reserved (7, zero),
///               created ms since the Unix epoch (8, big-endian), key (32)
/// 28+64n    32  SHA-256 of every byte before it
/// ```
public enum KeyStoreFormat {
    /// The magic bytes that open every item.
    public static let magic: [UInt8] = Array("AETHKEYS".utf8)
    /// The version this build writes and reads.
    public static let version: UInt16 = 1
    /// Bytes before the first entry.
    public static let headerByteCount = 28
    /// Bytes per key entry.
    public static let entryByteCount = 64
    /// Bytes of the trailing checksum.
    public static let checksumByteCount = 32
    /// The largest valid item (16 keys).
    public static let maximumByteCount = byteCount(keys: KeyRing.capacity)

    /// The exact size of an item holding `keys` keys.
    public static func byteCount(keys: Int) -> Int { headerByteCount + keys * entryByteCount + checksumByteCount }

    /// Encodes an item into wiped storage (it holds key bytes).
    public static func encode(_ item: KeyStoreItem) -> SecureBytes {
        let size = byteCount(keys: item.keys.count)
        return unsafe SecureBytes(count: size) { out in
            var writer = unsafe Writer(out: out)
            unsafe writer.append(magic)
            unsafe writer.appendUInt16(version)
            unsafe writer.appendUInt16(UInt16(item.keys.count))
            unsafe writer.append(item.hostID.bytes)
            for key in item.keys {
                unsafe writer.append(key.id.bytes)
                unsafe writer.append([key.state.rawValue, 0, 0, 0, 0, 0, 0, 0])
                unsafe writer.appendUInt64(key.createdAt.millisecondsSinceEpoch)
                unsafe key.key.withUnsafeBytes { unsafe writer.append($0) }
            }
            let checksum = unsafe SHA256.hash(UnsafeRawBufferPointer(rebasing: out[0..<writer.offset]))
            unsafe checksum.withUnsafeBytes { unsafe writer.append($0) }
        }
    }

    /// Decodes an item. Throws `.keyStoreDamaged` naming the damage; `expectedHostID` is the host the
    /// item is filed under (nil accepts any host).
    public static func decode(_ bytes: UnsafeRawBufferPointer, expectedHostID: HostID?) throws(SecurityError)
        -> KeyStoreItem
    {
        switch unsafe parse(bytes, expectedHostID: expectedHostID) {
        case .item(let item): return item
        case .damaged(let damage):
            throw SecurityError(.keyStoreDamaged, "key store item is damaged: \(damage)")
        }
    }

    /// Decodes an item held in wiped storage.
    public static func decode(_ bytes: SecureBytes, expectedHostID: HostID?) throws(SecurityError) -> KeyStoreItem {
        try unsafe bytes.withUnsafeBytes { (raw) throws(SecurityError) -> KeyStoreItem in
            try unsafe decode(raw, expectedHostID: expectedHostID)
        }
    }

    /// The outcome of parsing: an item, or why the bytes are not one.
    enum Parsed {
        case item(KeyStoreItem)
        case damaged(KeyStoreDamage)
    }

    static func parse(_ bytes: UnsafeRawBufferPointer, expectedHostID: HostID?) -> Parsed {
        let size = bytes.count
        guard size >= headerByteCount + checksumByteCount else {
            // A prefix of a valid header (even empty) was cut short; anything else is not ours.
            let prefix = min(size, magic.count)
            return unsafe Array(bytes[0..<prefix]) == Array(magic[0..<prefix])
                ? .damaged(.truncated) : .damaged(.garbage)
        }
        guard unsafe Array(bytes[0..<magic.count]) == magic else { return .damaged(.garbage) }
        guard unsafe readUInt16(bytes, at: 8) == version else { return .damaged(.unsupportedVersion) }
        let count = unsafe Int(readUInt16(bytes, at: 10))
        guard count <= KeyRing.capacity else { return .damaged(.garbage) }
        let expected = byteCount(keys: count)
        guard size >= expected else { return .damaged(.truncated) }
        guard size == expected else { return .damaged(.garbage) }

        let body = expected - checksumByteCount
        let computed = unsafe SHA256.hash(UnsafeRawBufferPointer(rebasing: bytes[0..<body]))
        guard let stored = unsafe try? Digest32(bytes: bytes[body..<expected]), computed == stored else {
            return .damaged(.checksumMismatch)
        }
        guard let hostID = unsafe try? HostID(bytes: bytes[12..<28]) else { return .damaged(.garbage) }
        if let expectedHostID, expectedHostID != hostID { return .damaged(.otherHostID) }

        var keys: [PairedKey] = []
        var seen = Set<KeyID>()
        for index in 0..<count {
            let base = headerByteCount + index * entryByteCount
            guard let id = unsafe try? KeyID(bytes: bytes[base..<base + 16]), seen.insert(id).inserted,
                let state = unsafe PairedKey.State(rawValue: bytes[base + 16]),
                unsafe bytes[base + 17..<base + 24].allSatisfy({ $0 == 0 })
            else { return .damaged(.garbage) }
            let created = unsafe KeyTimestamp(millisecondsSinceEpoch: readUInt64(bytes, at: base + 24))
            let secret = unsafe SecureBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[base + 32..<base + 64]))
            guard let symmetric = try? SymmetricKey(secureBytes: secret),
                let key = try? PairedKey(id: id, key: symmetric, hostID: hostID, createdAt: created, state: state)
            else { return .damaged(.garbage) }
            keys.append(key)
        }
        return .item(KeyStoreItem(validatedHostID: hostID, keys: keys))
    }

    private static func readUInt16(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt16 {
        unsafe UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    private static func readUInt64(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<8 { value = unsafe value << 8 | UInt64(bytes[offset + index]) }
        return value
    }

    /// Appends big-endian fields into a buffer of exactly the right size.
    @unsafe private struct Writer {
        let out: UnsafeMutableRawBufferPointer
        var offset = 0

        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            unsafe UnsafeMutableRawBufferPointer(rebasing: out[offset..<offset + bytes.count]).copyMemory(from: bytes)
            unsafe offset += bytes.count
        }

        mutating func append(_ bytes: [UInt8]) {
            unsafe bytes.withUnsafeBytes { unsafe append($0) }
        }

        mutating func appendUInt16(_ value: UInt16) { unsafe append([UInt8(value >> 8), UInt8(value & 0xFF)]) }

        mutating func appendUInt64(_ value: UInt64) {
            unsafe append((0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) })
        }
    }
}
