import AetherIO
import Foundation
import Testing

@testable import AetherSecurity

/// The tombstone list bytes: version 1 round trip and damage, and the strict reading of the old text form.
@Suite struct TombstoneFormatTests {
    static let id = KeyID(validatedBytes: Array(0x10..<0x20))
    static let other = KeyID(validatedBytes: Array(0xA0..<0xB0))

    static func list() throws -> TombstoneList {
        try TombstoneList(entries: [id: 1_700_000_000_123, other: 42])
    }

    @Test func aListRoundTripsWithTheDocumentedLayout() throws {
        let bytes = TombstoneFormat.encode(try Self.list())
        #expect(bytes.count == TombstoneFormat.byteCount(entries: 2))
        #expect(Array(bytes[0..<8]) == Array("AETHTOMB".utf8))
        #expect(Array(bytes[8..<16]) == [0, 1, 0, 0, 0, 0, 0, 2])
        #expect(Array(bytes[16..<32]) == Self.id.bytes)  // ascending key ids
        #expect(Array(bytes[32..<40]) == [0, 0, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x7B])
        #expect(Array(bytes[40..<56]) == Self.other.bytes)
        #expect(Array(bytes[64...]) == SHA256.hash(bytes[0..<64]).bytes)
        #expect(TombstoneFormat.parse(bytes) == .list(try Self.list(), .version1))
        #expect(TombstoneFormat.parse(TombstoneFormat.encode(TombstoneList())) == .list(TombstoneList(), .version1))
    }

    @Test func everyPrefixOfAListIsTruncated() throws {
        let bytes = TombstoneFormat.encode(try Self.list())
        for length in 1..<bytes.count {
            #expect(TombstoneFormat.parse(bytes[0..<length]) == .damaged(.truncated), "prefix \(length)")
        }
    }

    @Test func everySingleBitFlipIsDamage() throws {
        let bytes = TombstoneFormat.encode(try Self.list())
        for index in bytes.indices {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[index] ^= UInt8(1 << bit)
                guard case .damaged = TombstoneFormat.parse(flipped) else {
                    Issue.record("a flip of bit \(bit) of byte \(index) was accepted")
                    return
                }
            }
        }
    }

    @Test func aChangedInstantIsAChecksumMismatchAndAnOtherVersionIsUnsupported() throws {
        var bytes = TombstoneFormat.encode(try Self.list())
        bytes[39] ^= 1
        #expect(TombstoneFormat.parse(bytes) == .damaged(.checksumMismatch))
        var version = TombstoneFormat.encode(try Self.list())
        version[9] = 2
        #expect(TombstoneFormat.parse(version) == .damaged(.unsupportedVersion))
    }

    @Test func keyIDsOutOfOrderOrTwiceAreGarbageEvenWithAValidChecksum() throws {
        var bytes = TombstoneFormat.encode(try Self.list())
        // Swap the two entries and fix the checksum: a non-canonical list.
        let first = Array(bytes[16..<40])
        bytes.replaceSubrange(16..<40, with: bytes[40..<64])
        bytes.replaceSubrange(40..<64, with: first)
        bytes.replaceSubrange(64..., with: SHA256.hash(bytes[0..<64]).bytes)
        #expect(TombstoneFormat.parse(bytes) == .damaged(.garbage))
        bytes.replaceSubrange(40..<64, with: bytes[16..<40])
        bytes.replaceSubrange(64..., with: SHA256.hash(bytes[0..<64]).bytes)
        #expect(TombstoneFormat.parse(bytes) == .damaged(.garbage))
    }

    @Test func aStrictOldTextListIsRead() throws {
        let text = "\(Self.other.hex) 42\n\(Self.id.hex) 1700000000123\n"
        #expect(TombstoneFormat.parse(Array(text.utf8)) == .list(try Self.list(), .legacyText))
        #expect(TombstoneFormat.parse([UInt8]()) == .list(TombstoneList(), .legacyText))
    }

    /// The damages that once made the host accept a retired key again.
    @Test(arguments: [
        ("CRLF line ends", "ID 42\r\n", KeyStoreDamage.garbage),
        ("upper-case hex", "UPPER 42\n", .garbage),
        ("a line cut short", "ID 4", .truncated),
        ("a line cut inside the id", "PREFIX", .truncated),
        ("a missing instant", "ID \n", .garbage),
        ("two spaces", "ID  42\n", .garbage),
        ("a sign", "ID +42\n", .garbage),
        ("an instant past UInt64", "ID 99999999999999999999\n", .garbage),
        ("a stray blank line", "ID 42\n\n", .garbage),
        ("a comment", "# retired\nID 42\n", .garbage),
    ])
    func anyOtherTextIsDamage(_ name: String, _ template: String, _ expected: KeyStoreDamage) {
        let text =
            template.replacingOccurrences(of: "UPPER", with: Self.id.hex.uppercased())
            .replacingOccurrences(of: "PREFIX", with: String(Self.id.hex.prefix(10)))
            .replacingOccurrences(of: "ID", with: Self.id.hex)
        #expect(TombstoneFormat.parse(Array(text.utf8)) == .damaged(expected), "\(name)")
    }

    @Test func aListRefusesMoreThanItsCapacity() throws {
        var list = TombstoneList()
        #expect(try list.insert(Self.id, retiredAt: 9))
        #expect(try !list.insert(Self.id, retiredAt: 5))
        #expect(list.retiredAt(Self.id) == 5)  // the earlier instant is kept
        let tooMany = Dictionary(uniqueKeysWithValues: (0...TombstoneList.capacity).map { _ in (KeyID(), UInt64(1)) })
        #expect(throws: SecurityError.self) { _ = try TombstoneList(entries: tooMany) }
    }
}
