import AetherIO
import Testing

@testable import AetherSecurity

@Suite struct HKDFTests {
    @Test func reproducesEveryRFC5869SHA256TestCase() throws {
        let file = try VectorFile.load("rfc5869_hkdf_sha256.json")
        let vectors = try #require(file["vectors"] as? [[String: Any]])
        var checked = 0
        for vector in vectors {
            let length = try #require(vector["length"] as? Int)
            let okm = try HKDF.deriveSecureBytes(
                inputKeyMaterial: SecureBytes(copying: VectorFile.hex(vector["ikm"])),
                salt: VectorFile.hex(vector["salt"]),
                info: VectorFile.hex(vector["info"]), outputByteCount: length)
            let expected = try VectorFile.hex(vector["okm"])
            #expect(unsafe okm.withUnsafeBytes { unsafe Array($0) } == expected)
            checked += 1
        }
        #expect(checked == vectors.count && checked == 3)
    }

    @Test func aDerivedKeyIsThePrefixOfTheRFCOutput() throws {
        // RFC 5869 A.1 with a 32-byte output: the key must equal the first 32 bytes of the 42-byte OKM.
        let file = try VectorFile.load("rfc5869_hkdf_sha256.json")
        let vector = try #require((file["vectors"] as? [[String: Any]])?.first)
        let ikm = try SecureBytes(copying: VectorFile.hex(vector["ikm"]))
        let key = try SymmetricKey(
            secureBytes: HKDF.deriveSecureBytes(
                inputKeyMaterial: ikm, salt: VectorFile.hex(vector["salt"]), info: VectorFile.hex(vector["info"]),
                outputByteCount: 32))
        let expected = try SymmetricKey(secureBytes: SecureBytes(copying: VectorFile.hex(vector["okm"]).prefix(32)))
        #expect(key == expected)
        #expect("\(key)" == "<redacted>")
    }

    @Test func keysDependOnSaltInfoAndInput() throws {
        let master = SymmetricKey(size: .bits256)
        let base = try HKDF.deriveKey(inputKeyMaterial: master, salt: Array("s".utf8), info: Array("i".utf8))
        #expect(base.bitCount == 256)
        #expect(try HKDF.deriveKey(inputKeyMaterial: master, salt: Array("s".utf8), info: Array("i".utf8)) == base)
        #expect(try HKDF.deriveKey(inputKeyMaterial: master, salt: Array("t".utf8), info: Array("i".utf8)) != base)
        #expect(try HKDF.deriveKey(inputKeyMaterial: master, salt: Array("s".utf8), info: Array("j".utf8)) != base)
        let other = SymmetricKey(size: .bits256)
        #expect(try HKDF.deriveKey(inputKeyMaterial: other, salt: Array("s".utf8), info: Array("i".utf8)) != base)
        let short = try HKDF.deriveKey(
            inputKeyMaterial: master, salt: Array("s".utf8), info: Array("i".utf8), outputSize: .bits128)
        #expect(short.bitCount == 128)
    }

    @Test func outOfRangeLengthsAreRefused() {
        for length in [0, 255 * 32 + 1] {
            let error = #expect(throws: SecurityError.self) {
                try HKDF.deriveSecureBytes(
                    inputKeyMaterial: SecureBytes(randomCount: 32), salt: [UInt8](), info: [UInt8](),
                    outputByteCount: length)
            }
            #expect(error?.code == .invalidKey)
        }
    }
}

@Suite struct ResumeKeyDerivationTests {
    @Test func sessionKeysFollowTheSpecLabelsByteForByte() throws {
        let master = SymmetricKey(size: .bits256)
        let id = "upload-7f3a"
        let expected = try HKDF.deriveKey(
            inputKeyMaterial: master, salt: Array(id.utf8), info: Array("PR9-resume-upload-7f3a".utf8))
        #expect(try ResumeKeyDerivation.sessionKey(master: master, sessionID: id) == expected)
        #expect(ResumeKeyDerivation.infoPrefix == [0x50, 0x52, 0x39, 0x2D, 0x72, 0x65, 0x73, 0x75, 0x6D, 0x65, 0x2D])
        #expect(try ResumeKeyDerivation.sessionKey(master: master, sessionID: "upload-7f3b") != expected)
    }

    @Test func aKnownMasterGivesAKnownKey() throws {
        // Pins the derivation: HKDF-SHA-256(IKM = 32 x 0x01, salt = "s1", info = "PR9-resume-s1"), checked with
        // `openssl kdf -keylen 32 -kdfopt digest:SHA256 -kdfopt hexkey:0101... -kdfopt salt:s1
        //  -kdfopt info:PR9-resume-s1 HKDF`.
        let master = try SymmetricKey(secureBytes: SecureBytes(copying: [UInt8](repeating: 1, count: 32)))
        let key = try ResumeKeyDerivation.sessionKey(master: master, sessionID: "s1")
        let expected = try SymmetricKey(secureBytes: SecureBytes(copying: Hex.decode(Self.opensslOutput)))
        #expect(key == expected)
    }

    static let opensslOutput = "b617fe7a456695aed57eb674f5d2fd9d3363cde7f3d8a77d8f61d02bdd7544ee"

    @Test func emptyAndOverlongSessionIDsAreRefused() {
        let master = SymmetricKey(size: .bits256)
        for id in ["", String(repeating: "x", count: 257)] {
            let error = #expect(throws: SecurityError.self) {
                try ResumeKeyDerivation.sessionKey(master: master, sessionID: id)
            }
            #expect(error?.code == .invalidKey)
        }
    }
}

@Suite struct SessionKeyCacheTests {
    @Test func concurrentCallersForOneSessionGetOneKey() async throws {
        let cache = SessionKeyCache(master: SymmetricKey(size: .bits256))
        let keys = try await withThrowingTaskGroup(of: SymmetricKey.self) { group in
            for _ in 0..<32 { group.addTask { try cache.key(for: "session-1") } }
            var collected: [SymmetricKey] = []
            for try await key in group { collected.append(key) }
            return collected
        }
        #expect(keys.count == 32)
        #expect(keys.allSatisfy { $0 == keys[0] })
        #expect(cache.count == 1)
    }

    @Test func removalForgetsAndCapacityIsEnforced() throws {
        let master = SymmetricKey(size: .bits256)
        let cache = SessionKeyCache(master: master, capacity: 2)
        let first = try cache.key(for: "a")
        _ = try cache.key(for: "b")
        let error = #expect(throws: SecurityError.self) { try cache.key(for: "c") }
        #expect(error?.code == .limitExceeded)
        cache.remove(sessionID: "a")
        #expect(cache.count == 1)
        _ = try cache.key(for: "c")
        #expect(cache.count == 2)
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(try cache.key(for: "a") == first)
        #expect(first == (try ResumeKeyDerivation.sessionKey(master: master, sessionID: "a")))
    }
}
