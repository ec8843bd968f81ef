import Testing

@testable import AetherIO

@Suite struct SHA256Tests {
    // FIPS 180-4 / NIST CSRC "SHA-256 examples" (one-block "abc", two-block 448-bit message, empty input).
    static let nist: [(String, String)] = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ]

    @Test(arguments: nist) func matchesNISTExamples(message: String, expected: String) {
        #expect(SHA256.hash(Array(message.utf8)).hex == expected)
    }

    @Test func aMillionAsMatchesNIST() {
        var hasher = SHA256()
        let block = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(block) }
        #expect(hasher.finalize().hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func streamingInAnySplitEqualsOneShot() {
        var generator = SecureRandom()
        let data = (0..<1000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let expected = SHA256.hash(data)
        for split in [0, 1, 63, 64, 65, 999, 1000] {
            var hasher = SHA256()
            hasher.update(data[..<split])
            let fork = hasher
            hasher.update(data[split...])
            #expect(hasher.finalize() == expected)
            #expect(fork.finalize() == SHA256.hash(data[..<split]))
        }
    }
}

@Suite struct HMACSHA256Tests {
    // RFC 4231 test cases 1, 2 and 6 (key longer than the block).
    @Test func matchesRFC4231() throws {
        let case1 = try HMACSHA256.authenticate(
            Array("Hi There".utf8), key: SecureBytes(copying: [UInt8](repeating: 0x0b, count: 20)))
        #expect(case1.hex == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let case2 = try HMACSHA256.authenticate(
            Array("what do ya want for nothing?".utf8), key: SecureBytes(copying: Array("Jefe".utf8)))
        #expect(case2.hex == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let case6 = try HMACSHA256.authenticate(
            Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            key: SecureBytes(copying: [UInt8](repeating: 0xaa, count: 131)))
        #expect(case6.hex == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func copiesForkTheStream() throws {
        var mac = try HMACSHA256(key: SecureBytes(copying: Array("Jefe".utf8)))
        try mac.update(Array("what do ya want ".utf8))
        var fork = mac
        try mac.update(Array("for nothing?".utf8))
        try fork.update(Array("for something?".utf8))
        #expect(try mac.finalize().hex == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(try fork.finalize() != mac.finalize())
    }
}

@Suite struct CRC32CTests {
    // RFC 3720 appendix B.4 vectors, plus the standard check value of "123456789".
    @Test func matchesRFC3720Vectors() {
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).reversed().map { UInt8($0) }) == 0x113F_DB5C)
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    }

    @Test func hardwareAndTableKernelsAgree() {
        var generator = SecureRandom()
        for length in [0, 1, 7, 8, 9, 63, 64, 65, 4095, 4096, 4097, 100_003] {
            let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let table = unsafe data.withUnsafeBytes { unsafe CRC32C.tableChecksum($0) }
            #expect(CRC32C.checksum(data) == table, "length \(length)")
        }
    }
}

@Suite struct HexTests {
    @Test func parseErrorsAreErrorsNotInequality() throws {
        #expect(throws: IOError.self) { try Digest32(hex: String(repeating: "g", count: 64)) }
        #expect(throws: IOError.self) { try Digest32(hex: "abc") }
        #expect(throws: IOError.self) { try Hex.decodeLowercase("AB") }
        #expect(try Hex.decode("00ff7A") == [0x00, 0xFF, 0x7A])
    }

    @Test func secureBytesNeverPrintTheirContents() {
        let secret = SecureBytes(copying: Array("hunter2".utf8))
        #expect("\(secret)" == "<redacted>")
        #expect(String(reflecting: secret) == "<redacted>")
        #expect(secret.constantTimeEquals(SecureBytes(copying: Array("hunter2".utf8))))
        #expect(!secret.constantTimeEquals(SecureBytes(copying: Array("hunter3".utf8))))
    }
}
