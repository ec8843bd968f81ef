import AetherIO
import Testing

@testable import AetherSecurity

@Suite struct KeyStoreFormatTests {
    let host = HostID()

    func item(keys: Int) throws -> KeyStoreItem {
        let states = PairedKey.State.allCases
        return try KeyStoreItem(
            hostID: host,
            keys: (0..<keys).map { KeyFixtures.key(host, at: 1_700_000_000_000 + UInt64($0), states[$0 % 3]) })
    }

    func bytes(_ item: KeyStoreItem) -> [UInt8] {
        unsafe KeyStoreFormat.encode(item).withUnsafeBytes { unsafe Array($0) }
    }

    func parse(_ bytes: [UInt8], expecting hostID: HostID?) -> KeyStoreFormat.Parsed {
        unsafe bytes.withUnsafeBytes { unsafe KeyStoreFormat.parse($0, expectedHostID: hostID) }
    }

    func damage(_ bytes: [UInt8]) -> KeyStoreDamage? {
        if case .damaged(let damage) = parse(bytes, expecting: host) { return damage }
        return nil
    }

    /// Rewrites the trailing checksum so a test reaches the checks behind it.
    func resealed(_ bytes: [UInt8]) -> [UInt8] {
        let body = Array(bytes.dropLast(KeyStoreFormat.checksumByteCount))
        return body + SHA256.hash(body).bytes
    }

    @Test(arguments: [0, 1, 2, 16])
    func anItemRoundTripsThroughTheFormat(_ count: Int) throws {
        let original = try item(keys: count)
        let encoded = bytes(original)
        #expect(encoded.count == KeyStoreFormat.byteCount(keys: count))
        let decoded = try unsafe encoded.withUnsafeBytes { raw in
            try unsafe KeyStoreFormat.decode(raw, expectedHostID: host)
        }
        #expect(decoded == original)
        #expect(decoded.keys.map(\.createdAt) == original.keys.map(\.createdAt))
        #expect(decoded.keys.map(\.state) == original.keys.map(\.state))
    }

    @Test func theLayoutMatchesTheDocumentedOffsets() throws {
        let original = try item(keys: 1)
        let encoded = bytes(original)
        let key = original.keys[0]
        #expect(Array(encoded[0..<8]) == Array("AETHKEYS".utf8))
        #expect(Array(encoded[8..<12]) == [0, 1, 0, 1])
        #expect(Array(encoded[12..<28]) == host.bytes)
        #expect(Array(encoded[28..<44]) == key.id.bytes)
        #expect(Array(encoded[44..<52]) == [key.state.rawValue, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(encoded[52..<60]) == [0, 0, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00])  // 1_700_000_000_000
        #expect(unsafe Array(encoded[60..<92]) == key.key.withUnsafeBytes { unsafe Array($0) })
        #expect(Array(encoded[92..<124]) == SHA256.hash(encoded[0..<92]).bytes)
    }

    @Test func everyPrefixOfAnItemIsReportedTruncated() throws {
        let encoded = bytes(try item(keys: 2))
        for length in 0..<encoded.count {
            #expect(damage(Array(encoded[0..<length])) == .truncated, "prefix of \(length) bytes")
        }
    }

    @Test func everySingleBitFlipIsReportedDamaged() throws {
        let encoded = bytes(try item(keys: 2))
        for index in encoded.indices {
            var flipped = encoded
            flipped[index] ^= 0x10
            #expect(damage(flipped) != nil, "bit flipped in byte \(index)")
        }
    }

    @Test func aFlippedKeyByteIsAChecksumMismatch() throws {
        var encoded = bytes(try item(keys: 1))
        encoded[70] ^= 1
        #expect(damage(encoded) == .checksumMismatch)
    }

    @Test func anotherHostsItemIsReportedAsSuch() throws {
        let encoded = bytes(try item(keys: 1))
        #expect(parse(encoded, expecting: HostID()).damageValue == .otherHostID)
        #expect(parse(encoded, expecting: nil).damageValue == nil)
    }

    @Test func anUnknownVersionIsReportedAsUnsupported() throws {
        var encoded = bytes(try item(keys: 1))
        encoded[9] = 2
        #expect(damage(resealed(encoded)) == .unsupportedVersion)
        #expect(damage(encoded) == .unsupportedVersion)
    }

    @Test(arguments: ["trailing byte", "bad magic", "count 17", "state 0", "state 4", "reserved byte", "duplicate id"])
    func malformedContentIsReportedAsGarbage(_ mutation: String) throws {
        let encoded = bytes(try item(keys: 2))
        var changed = encoded
        switch mutation {
        case "trailing byte": changed.append(0)
        case "bad magic": changed[0] = UInt8(ascii: "X")
        case "count 17": changed[11] = 17
        case "state 0": changed[44] = 0
        case "state 4": changed[44] = 4
        case "reserved byte": changed[45] = 1
        default: changed.replaceSubrange(92..<108, with: encoded[28..<44])
        }
        if mutation != "trailing byte" && mutation != "bad magic" { changed = resealed(changed) }
        #expect(damage(changed) == .garbage)
    }

    @Test func randomBytesAreGarbage() {
        var generator = SecureRandom()
        for length in [5, 60, 124, 500] {
            var random = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            random[0] = UInt8(ascii: "Z")
            #expect(damage(random) == .garbage)
        }
    }

    @Test func aDecodeErrorNamesTheDamageAndNoKeyBytes() throws {
        let original = try item(keys: 1)
        var encoded = bytes(original)
        encoded[70] ^= 1
        let error = #expect(throws: SecurityError.self) {
            _ = try unsafe encoded.withUnsafeBytes { raw in try unsafe KeyStoreFormat.decode(raw, expectedHostID: host)
            }
        }
        #expect(error?.code == .keyStoreDamaged)
        #expect(error?.message.contains("checksum mismatch") == true)
        #expect(error?.message.contains(Hex.encode(encoded[60..<76])) == false)
        #expect(original.description == "KeyStoreItem(host: \(host), keys: 1)")
    }

    @Test func anItemRejectsKeysOfAnotherHostDuplicatesAndMoreThanSixteen() {
        let key = KeyFixtures.key(host, at: 1)
        #expect(throws: SecurityError.self) { try KeyStoreItem(hostID: HostID(), keys: [key]) }
        #expect(throws: SecurityError.self) { try KeyStoreItem(hostID: host, keys: [key, key]) }
        let many = (0...KeyRing.capacity).map { KeyFixtures.key(host, at: UInt64($0)) }
        #expect(throws: SecurityError.self) { try KeyStoreItem(hostID: host, keys: many) }
    }
}

extension KeyStoreFormat.Parsed {
    var damageValue: KeyStoreDamage? {
        if case .damaged(let damage) = self { return damage }
        return nil
    }
}
