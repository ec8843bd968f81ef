import AetherIO
import Foundation
import Testing

@testable import AetherSecurity

/// Loads a JSON vector file from `Vectors/`.
enum VectorFile {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Vectors")

    static func load(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent(name))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw SecurityError(.malformedMessage, "\(name) is not a JSON object")
        }
        return object
    }

    static func hex(_ object: Any?) throws -> [UInt8] {
        guard let text = object as? String else { throw SecurityError(.malformedMessage, "missing hex field") }
        return try Hex.decode(text)
    }
}

@Suite struct X25519Tests {
    @Test func reproducesRFC7748ScalarMultiplicationAndDiffieHellmanVectors() throws {
        let file = try VectorFile.load("rfc7748_x25519.json")
        let vectors = try #require(file["x25519_scalarmult"] as? [[String: Any]])
        var checked = 0
        for vector in vectors {
            let scalar = try X25519.PrivateKey(secureBytes: SecureBytes(copying: VectorFile.hex(vector["scalar"])))
            let peer = try X25519.PublicKey(rawRepresentation: VectorFile.hex(vector["u"]))
            let shared = try scalar.sharedSecret(with: peer)
            let bytes = unsafe shared.withUnsafeBytes { unsafe Array($0) }
            #expect(bytes == (try VectorFile.hex(vector["output"])))
            checked += 1
        }
        #expect(checked == vectors.count && checked == 2)

        let dh = try #require(file["x25519_dh"] as? [String: Any])
        let alice = try X25519.PrivateKey(secureBytes: SecureBytes(copying: VectorFile.hex(dh["alice_private"])))
        let bob = try X25519.PrivateKey(secureBytes: SecureBytes(copying: VectorFile.hex(dh["bob_private"])))
        #expect(alice.publicKey.rawRepresentation == (try VectorFile.hex(dh["alice_public"])))
        #expect(bob.publicKey.rawRepresentation == (try VectorFile.hex(dh["bob_public"])))
        let ab = unsafe try alice.sharedSecret(with: bob.publicKey).withUnsafeBytes { unsafe Array($0) }
        let ba = unsafe try bob.sharedSecret(with: alice.publicKey).withUnsafeBytes { unsafe Array($0) }
        #expect(ab == (try VectorFile.hex(dh["shared_secret"])))
        #expect(ab == ba)
    }

    @Test func iteratedVectorsUpToOneThousandRounds() throws {
        let file = try VectorFile.load("rfc7748_x25519.json")
        let iterated = try #require(file["x25519_iterated"] as? [String: Any])
        let results = try #require(iterated["results"] as? [[String: Any]])
        var k = try VectorFile.hex(iterated["initial"])
        var u = k
        var rounds = 0
        var checked = 0
        for result in results {
            let target = try #require(result["iterations"] as? Int)
            guard target <= 1000 else { continue }  // the million-round vector is too slow for make test
            while rounds < target {
                let next = unsafe try X25519.PrivateKey(secureBytes: SecureBytes(copying: k))
                    .sharedSecret(with: X25519.PublicKey(rawRepresentation: u)).withUnsafeBytes { unsafe Array($0) }
                u = k
                k = next
                rounds += 1
            }
            #expect(k == (try VectorFile.hex(result["k"])))
            checked += 1
        }
        #expect(checked == 2 && results.count == 3)
    }

    @Test func smallOrderPointsFailClosed() throws {
        let key = try X25519.PrivateKey()
        // The all-zero point and the point of order 1 (u = 1) give an all-zero shared secret.
        for u in [[UInt8](repeating: 0, count: 32), [1] + [UInt8](repeating: 0, count: 31)] {
            let error = #expect(throws: SecurityError.self) {
                try key.sharedSecret(with: X25519.PublicKey(rawRepresentation: u))
            }
            #expect(error?.code == .authenticationFailed)
        }
        #expect(throws: SecurityError.self) {
            try X25519.PublicKey(rawRepresentation: [UInt8](repeating: 9, count: 31))
        }
        #expect("\(key)" == "<redacted>")
    }

    @Test func aKeyFromAnUninitialisedLibraryThrowsOnceInsteadOfLooping() throws {
        // Before the fix this init retried forever when libsodium could not derive a public key.
        let error = #expect(throws: SecurityError.self) { try X25519.PrivateKey(libraryReady: false) }
        #expect(error?.code == .cryptoFailure)
        let fresh = try X25519.PrivateKey(libraryReady: true)
        let again = try X25519.PrivateKey()
        #expect(fresh.publicKey != again.publicKey)
        let shared = try fresh.sharedSecret(with: again.publicKey)
        let mirrored = try again.sharedSecret(with: fresh.publicKey)
        let ours = unsafe shared.withUnsafeBytes { unsafe Array($0) }
        let theirs = unsafe mirrored.withUnsafeBytes { unsafe Array($0) }
        #expect(ours == theirs)
    }
}

@Suite struct ChaChaPolyTests {
    @Test func reproducesEveryRFC8439Vector() throws {
        let file = try VectorFile.load("rfc8439_chacha20poly1305_aead.json")
        let vectors = try #require(file["vectors"] as? [[String: Any]])
        var checked = 0
        for vector in vectors {
            let key = try SymmetricKey(secureBytes: SecureBytes(copying: VectorFile.hex(vector["key"])))
            let nonce = try ChaChaPoly.Nonce(bytes: VectorFile.hex(vector["nonce"]))
            let aad = try VectorFile.hex(vector["aad"])
            let plaintext = try VectorFile.hex(vector["plaintext"])
            let expected = try VectorFile.hex(vector["ciphertext"]) + VectorFile.hex(vector["tag"])
            #expect(try ChaChaPoly.seal(plaintext, authenticating: aad, nonce: nonce, key: key) == expected)
            #expect(try ChaChaPoly.open(expected, authenticating: aad, nonce: nonce, key: key) == plaintext)
            checked += 1
        }
        #expect(checked == vectors.count && checked == 2)
    }

    @Test func anyTamperingFailsWithTheOneAuthenticationError() throws {
        let key = SymmetricKey(size: .bits256)
        let nonce = ChaChaPoly.Nonce(noiseCounter: 7)
        let aad = Array("header".utf8)
        let sealed = try ChaChaPoly.seal(Array("payload bytes".utf8), authenticating: aad, nonce: nonce, key: key)
        var generator = SecureRandom()
        for _ in 0..<64 {
            var tampered = sealed
            tampered[Int.random(in: 0..<tampered.count, using: &generator)] ^= UInt8.random(
                in: 1...255, using: &generator)
            let error = #expect(throws: SecurityError.self) {
                try ChaChaPoly.open(tampered, authenticating: aad, nonce: nonce, key: key)
            }
            #expect(error?.code == .authenticationFailed)
            #expect(error?.message == "authentication failed")
        }
        #expect(throws: SecurityError.self) {
            try ChaChaPoly.open(sealed, authenticating: Array("Header".utf8), nonce: nonce, key: key)
        }
        #expect(throws: SecurityError.self) {
            try ChaChaPoly.open(sealed, authenticating: aad, nonce: ChaChaPoly.Nonce(noiseCounter: 8), key: key)
        }
        #expect(throws: SecurityError.self) {
            try ChaChaPoly.open(sealed, authenticating: aad, nonce: nonce, key: SymmetricKey(size: .bits256))
        }
        #expect(throws: SecurityError.self) { try ChaChaPoly.open([1, 2, 3], nonce: nonce, key: key) }
    }

    @Test func noiseNonceIsFourZeroBytesThenTheLittleEndianCounter() {
        #expect(ChaChaPoly.Nonce(noiseCounter: 0x0102_0304_0506_0708).bytes == [0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1])
    }
}

@Suite struct SymmetricKeyTests {
    @Test func keysAreRedactedSizedAndComparedByValue() throws {
        let key = SymmetricKey(size: .bits128)
        #expect(key.bitCount == 128)
        #expect("\(key)" == "<redacted>" && String(reflecting: key) == "<redacted>")
        let bytes = SecureBytes(copying: [UInt8](repeating: 4, count: 32))
        #expect(
            try SymmetricKey(secureBytes: bytes)
                == SymmetricKey(secureBytes: SecureBytes(copying: [UInt8](repeating: 4, count: 32))))
        #expect(key != SymmetricKey(size: .bits128))
        #expect(throws: SecurityError.self) { try SymmetricKey(secureBytes: SecureBytes(copying: [1, 2, 3])) }
    }
}
