import AetherIO
import AetherTestSupport
import Foundation
import Testing

@testable import AetherSecurity

/// AetherSecurity's upload security against `Tests/Interop/peers/upload_security.py`, an implementation of
/// docs/UPLOAD-SECURITY.md on PyPI `cryptography` that shares no code with the Swift side.
@Suite struct UploadSecurityInteropTests {
    static func call(_ command: String, _ request: [String: Any]) throws -> [String: Any] {
        let output = try PythonPeer.run(
            "upload_security.py", [command], input: JSONSerialization.data(withJSONObject: request))
        guard let object = try JSONSerialization.jsonObject(with: output) as? [String: Any] else {
            throw SecurityError(.malformedMessage, "the peer did not answer a JSON object")
        }
        return object
    }

    @Test func aPinUpdateSignedByPythonCryptographyVerifiesAndApplies() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let oldPin = SPKIPin(digest: SHA256.hash(Array("old CA key".utf8)))
        let newPins = [SPKIPin(digest: SHA256.hash(Array("new CA 1".utf8))), SPKIPin(digest: SHA256.hash([2]))]
        let answer = try Self.call(
            "pin-update",
            ["pins": newPins.map(\.base64), "effective": 1_799_999_000, "expiry": 1_800_086_400])
        let pem = try #require(answer["publicKeyPem"] as? String)
        let payloadJSON = try JSONSerialization.data(withJSONObject: try #require(answer["payload"]))
        let payload = try PinUpdatePayload(json: Array(payloadJSON))
        let key = try PinSigningKey(pem: pem)
        #expect(payload.signingKeyID == key.id)
        #expect(key.verifies(payload))

        let manager = CertificatePinManager(
            configuration: try PinConfiguration(caPins: [oldPin], issuedAt: now.addingTimeInterval(-86_400)),
            trustedKeys: [key], clock: ManualClock(wall: .seconds(now.timeIntervalSince1970)))
        try manager.apply(payload)
        #expect(manager.snapshot.caPins == Set(newPins))
        #expect(manager.snapshot.backupCAPins == [oldPin])
    }

    @Test func resumeKeysMatchPythonHKDF() throws {
        let masterBytes = SecureRandom.bytes(32)
        let master = try SymmetricKey(secureBytes: SecureBytes(copying: masterBytes))
        for id in ["upload-1", "セッション", String(repeating: "z", count: 256)] {
            let answer = try Self.call("resume-key", ["master": Hex.encode(masterBytes), "sessionId": id])
            let expected = try SymmetricKey(
                secureBytes: SecureBytes(copying: Hex.decode(try #require(answer["key"] as? String))))
            #expect(try ResumeKeyDerivation.sessionKey(master: master, sessionID: id) == expected)
        }
    }

    @Test func aesGCMInteroperatesBothWaysAndTamperingIsRefusedByBoth() throws {
        let keyBytes = SecureRandom.bytes(32)
        let key = try SymmetricKey(secureBytes: SecureBytes(copying: keyBytes))
        let nonce = AESGCM.Nonce()
        let aad = SecureRandom.bytes(13)
        let plaintext = SecureRandom.bytes(1000)
        let common: [String: Any] = [
            "key": Hex.encode(keyBytes), "nonce": Hex.encode(nonce.bytes), "aad": Hex.encode(aad),
        ]

        let sealed = try AESGCM.seal(plaintext, authenticating: aad, nonce: nonce, key: key)
        let opened = try Self.call("gcm-open", common.merging(["sealed": Hex.encode(sealed)]) { $1 })
        #expect(opened["plaintext"] as? String == Hex.encode(plaintext))
        var tampered = sealed
        tampered[500] ^= 1
        let refused = try Self.call("gcm-open", common.merging(["sealed": Hex.encode(tampered)]) { $1 })
        #expect(refused["error"] as? String == "InvalidTag")

        let theirs = try Hex.decode(
            try #require(
                Self.call("gcm-seal", common.merging(["plaintext": Hex.encode(plaintext)]) { $1 })["sealed"] as? String)
        )
        #expect(theirs == sealed)
        #expect(try AESGCM.open(theirs, authenticating: aad, nonce: nonce, key: key) == plaintext)
    }

    @Test func aPythonProverPassesTheSwiftVerifier() throws {
        let content = SecureRandom.bytes(70_000)
        let chunkSize: UInt32 = 8192
        let source = InMemoryPossessionSource(content)
        let verifier = try ProofOfPossessionVerifier(
            source: source, chunkSize: chunkSize,
            chunkHashes: ProofOfPossessionProver.chunkHashes(of: source, chunkSize: chunkSize))
        for _ in 0..<3 {
            let challenge = try verifier.issueChallenge()
            let answer = try Self.call(
                "pop-prove",
                [
                    "content": Hex.encode(content), "chunkSize": Int(chunkSize),
                    "challenge": Hex.encode(challenge.serialized),
                ])
            let response = try PossessionResponse(
                serialized: Hex.decode(try #require(answer["response"] as? String)))
            try verifier.verify(response)
        }
        // The same peer holding different bytes fails.
        var other = content
        other[69_999] ^= 1
        let challenge = try verifier.issueChallenge()
        let answer = try Self.call(
            "pop-prove",
            ["content": Hex.encode(other), "chunkSize": Int(chunkSize), "challenge": Hex.encode(challenge.serialized)])
        let response = try PossessionResponse(serialized: Hex.decode(try #require(answer["response"] as? String)))
        let error = #expect(throws: SecurityError.self) { try verifier.verify(response) }
        #expect(error?.code == .authenticationFailed)
    }
}
