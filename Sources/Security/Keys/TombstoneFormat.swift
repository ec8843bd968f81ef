import AetherIO

/// The tombstone list file format, version 1 (docs/KEY-STORE.md), and the strict reading of the
/// earlier text form. Pure: bytes in, list or damage out.
///
/// ```
/// offset  size  field
///      0     8  magic "AETHTOMB"
///      8     2  version, big-endian (1)
///     10     2  reserved, zero
///     12     4  entry count n, big-endian (0...65,536)
///     16  24*n  entries, key ids strictly ascending: key id (16), retired at, ms since the Unix epoch (8, big-endian)
/// 16+24n    32  SHA-256 of every byte before it
/// ```
///
/// The text form written before version 1 (`KEYID RETIRED_AT_MS\n` lines, no checksum) is read only when
/// every line is exactly 32 lowercase hex digits, one space, a decimal number and a line feed; anything
/// else (CRLF, upper case, a line cut short, a stray byte) is damage. The next write replaces it with version 1.
public enum TombstoneFormat {
    /// The magic bytes that open a version 1 list.
    public static let magic: [UInt8] = Array("AETHTOMB".utf8)
    /// The version this build writes.
    public static let version: UInt16 = 1
    /// Bytes before the first entry.
    public static let headerByteCount = 16
    /// Bytes per entry.
    public static let entryByteCount = 24
    /// Bytes of the trailing checksum.
    public static let checksumByteCount = 32
    /// The largest valid file (either form).
    public static let maximumByteCount = byteCount(entries: TombstoneList.capacity)

    /// The exact size of a version 1 list of `entries` entries.
    public static func byteCount(entries: Int) -> Int { headerByteCount + entries * entryByteCount + checksumByteCount }

    /// Which form a file was in.
    public enum Form: Sendable, Hashable {
        /// Version 1 (binary, checksummed).
        case version1
        /// The text lines written before version 1.
        case legacyText
    }

    /// The outcome of parsing: a list (and its form), or why the bytes are not one.
    public enum Parsed: Sendable, Hashable {
        /// A valid list.
        case list(TombstoneList, Form)
        /// Damaged; the file must be left as it is.
        case damaged(KeyStoreDamage)
    }

    /// Encodes a list, entries in ascending key id order.
    public static func encode(_ list: TombstoneList) -> [UInt8] {
        var out = magic
        out += [UInt8(version >> 8), UInt8(version & 0xFF), 0, 0]
        out += bigEndian(UInt64(list.count), bytes: 4)
        for id in list.keyIDs {
            out += id.bytes
            out += bigEndian(list.retiredAt(id) ?? 0, bytes: 8)
        }
        out += SHA256.hash(out).bytes
        return out
    }

    /// Parses either form.
    public static func parse(_ bytes: some Collection<UInt8>) -> Parsed {
        let bytes = Array(bytes)
        let prefix = min(bytes.count, magic.count)
        if bytes.count < headerByteCount + checksumByteCount, !bytes.isEmpty, bytes[0..<prefix] == magic[0..<prefix] {
            return .damaged(.truncated)
        }
        guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic else { return parseLegacy(bytes) }
        guard readBigEndian(bytes, at: 8, count: 2) == UInt64(version) else { return .damaged(.unsupportedVersion) }
        guard bytes[10] == 0, bytes[11] == 0 else { return .damaged(.garbage) }
        let count = Int(readBigEndian(bytes, at: 12, count: 4))
        guard count <= TombstoneList.capacity else { return .damaged(.garbage) }
        let expected = byteCount(entries: count)
        guard bytes.count >= expected else { return .damaged(.truncated) }
        guard bytes.count == expected else { return .damaged(.garbage) }
        let body = expected - checksumByteCount
        guard SHA256.hash(bytes[0..<body]).bytes == Array(bytes[body..<expected]) else {
            return .damaged(.checksumMismatch)
        }
        var entries: [KeyID: UInt64] = [:]
        var previous: KeyID?
        for index in 0..<count {
            let base = headerByteCount + index * entryByteCount
            guard let id = try? KeyID(bytes: bytes[base..<base + 16]) else { return .damaged(.garbage) }
            // Strictly ascending: one canonical encoding per list, no duplicates.
            if let previous, !(previous < id) { return .damaged(.garbage) }
            previous = id
            entries[id] = readBigEndian(bytes, at: base + 16, count: 8)
        }
        return .list(TombstoneList(validatedEntries: entries), .version1)
    }

    /// The text form: `^[0-9a-f]{32} [0-9]{1,20}\n` lines and nothing else.
    static func parseLegacy(_ bytes: [UInt8]) -> Parsed {
        guard bytes.count <= maximumByteCount else { return .damaged(.garbage) }
        var entries: [KeyID: UInt64] = [:]
        var lineStart = 0
        while lineStart < bytes.count {
            guard let newline = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) else {
                // The last line has no line feed: it was cut short.
                return isLegacyPrefix(bytes[lineStart...]) ? .damaged(.truncated) : .damaged(.garbage)
            }
            let line = bytes[lineStart..<newline]
            guard line.count > 33, line[line.startIndex + 32] == UInt8(ascii: " ") else { return .damaged(.garbage) }
            let hex = line.prefix(32)
            let number = line.dropFirst(33)
            guard hex.allSatisfy(isLowerHex), number.count <= 20, number.allSatisfy(isDigit),
                let id = try? KeyID(hex: String(decoding: hex, as: UTF8.self)),
                let at = UInt64(String(decoding: number, as: UTF8.self))
            else { return .damaged(.garbage) }
            entries[id] = min(entries[id] ?? at, at)
            guard entries.count <= TombstoneList.capacity else { return .damaged(.garbage) }
            lineStart = newline + 1
        }
        return .list(TombstoneList(validatedEntries: entries), .legacyText)
    }

    /// Whether `tail` could be the start of a valid line (so its missing end is a truncation, not garbage).
    private static func isLegacyPrefix(_ tail: ArraySlice<UInt8>) -> Bool {
        for (offset, byte) in tail.enumerated() {
            switch offset {
            case 0..<32: guard isLowerHex(byte) else { return false }
            case 32: guard byte == UInt8(ascii: " ") else { return false }
            default: guard isDigit(byte), offset < 53 else { return false }
            }
        }
        return true
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func bigEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(bytes - 1 - $0))) }
    }

    private static func readBigEndian(_ bytes: [UInt8], at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<count { value = value << 8 | UInt64(bytes[offset + index]) }
        return value
    }
}
