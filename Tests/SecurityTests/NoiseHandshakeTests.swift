import AetherIO
import Testing

@testable import AetherSecurity

@Suite struct NoiseHandshakeTests {
    struct Cacophony {
        let prologue: [UInt8]
        let psk: SymmetricKey
        let initiatorEphemeral: X25519.PrivateKey
        let responderEphemeral: X25519.PrivateKey
        let handshakeHash: [UInt8]
        let messages: [(payload: [UInt8], ciphertext: [UInt8])]

        static func load() throws -> Cacophony {
            let file = try VectorFile.load("noise_nnpsk0_25519_chachapoly_sha256.json")
            let vectors = try #require(file["vectors"] as? [[String: Any]])
            #expect(vectors.count == 1)
            let vector = try #require(vectors.first)
            #expect(vector["protocol_name"] as? String == NoiseProtocol.name)
            let psks = try #require(vector["init_psks"] as? [String])
            #expect(psks == vector["resp_psks"] as? [String])
            #expect(psks.count == 1)
            #expect(vector["init_prologue"] as? String == vector["resp_prologue"] as? String)
            let rawMessages = try #require(vector["messages"] as? [[String: Any]])
            return Cacophony(
                prologue: try VectorFile.hex(vector["init_prologue"]),
                psk: try SymmetricKey(secureBytes: SecureBytes(copying: try VectorFile.hex(psks[0]))),
                initiatorEphemeral: try X25519.PrivateKey(
                    secureBytes: SecureBytes(copying: try VectorFile.hex(vector["init_ephemeral"]))),
                responderEphemeral: try X25519.PrivateKey(
                    secureBytes: SecureBytes(copying: try VectorFile.hex(vector["resp_ephemeral"]))),
                handshakeHash: try VectorFile.hex(vector["handshake_hash"]),
                messages: try rawMessages.map {
                    (try VectorFile.hex($0["payload"]), try VectorFile.hex($0["ciphertext"]))
                })
        }
    }

    @Test func reproducesTheCacophonyVectorOnBothSides() throws {
        let vector = try Cacophony.load()
        #expect(vector.messages.count == 6)
        var initiator = try NoiseInitiator(
            psk: vector.psk, prologue: vector.prologue, ephemeral: vector.initiatorEphemeral)
        var responder = try NoiseResponder(
            psk: vector.psk, prologue: vector.prologue, ephemeral: vector.responderEphemeral)
        let message1 = try initiator.writeMessage1(payload: vector.messages[0].payload)
        #expect(message1 == vector.messages[0].ciphertext)
        #expect(try responder.readMessage1(message1) == vector.messages[0].payload)
        let (message2, responderKeys) = try responder.writeMessage2(payload: vector.messages[1].payload)
        #expect(message2 == vector.messages[1].ciphertext)
        let result = try initiator.readMessage2(message2)
        #expect(result.payload == vector.messages[1].payload)
        #expect(result.keys.handshakeHash.bytes == vector.handshakeHash)
        #expect(responderKeys.handshakeHash.bytes == vector.handshakeHash)
        #expect(result.keys.initiatorToResponder == responderKeys.initiatorToResponder)
        #expect(result.keys.responderToInitiator == responderKeys.responderToInitiator)
        // Transport messages: even indices initiator -> responder, odd the other way, nonces from 0, empty AD.
        var checked = 2
        for (index, message) in vector.messages.enumerated().dropFirst(2) {
            let fromInitiator = index % 2 == 0
            let key = fromInitiator ? result.keys.initiatorToResponder : result.keys.responderToInitiator
            let nonce = ChaChaPoly.Nonce(noiseCounter: UInt64((index - 2) / 2))
            #expect(try ChaChaPoly.seal(message.payload, nonce: nonce, key: key) == message.ciphertext)
            checked += 1
        }
        #expect(checked == vector.messages.count)
    }

    @Test func aMessage2ThatFailsToAuthenticateChangesNothingAndAValidOneIsStillAccepted() throws {
        let vector = try Cacophony.load()
        var initiator = try NoiseInitiator(
            psk: vector.psk, prologue: vector.prologue, ephemeral: vector.initiatorEphemeral)
        var responder = try NoiseResponder(
            psk: vector.psk, prologue: vector.prologue, ephemeral: vector.responderEphemeral)
        _ = try responder.readMessage1(try initiator.writeMessage1(payload: vector.messages[0].payload))
        let (message2, _) = try responder.writeMessage2(payload: vector.messages[1].payload)
        for position in [0, 31, 32, message2.count - 1] {
            var forged = message2
            forged[position] ^= 0x01
            #expect(throws: SecurityError.self) { try initiator.readMessage2(forged) }
            #expect(!initiator.isFinished)
        }
        #expect(throws: SecurityError.self) { try initiator.readMessage2(Array(message2.prefix(47))) }
        // A small-order peer key (all zero) fails the DH and changes nothing either.
        var smallOrder = message2
        for index in 0..<32 { smallOrder[index] = 0 }
        #expect(throws: SecurityError.self) { try initiator.readMessage2(smallOrder) }
        let result = try initiator.readMessage2(message2)
        #expect(result.payload == vector.messages[1].payload)
        #expect(result.keys.handshakeHash.bytes == vector.handshakeHash)
        #expect(initiator.isFinished)
        // The attempt is over: even the same valid message 2 is not read twice.
        #expect(throws: SecurityError.self) { try initiator.readMessage2(message2) }
    }

    @Test func aForgedMessage1ChangesNothingOnTheResponder() throws {
        let vector = try Cacophony.load()
        var initiator = try NoiseInitiator(
            psk: vector.psk, prologue: vector.prologue, ephemeral: vector.initiatorEphemeral)
        var responder = try NoiseResponder(
            psk: vector.psk, prologue: vector.prologue, ephemeral: vector.responderEphemeral)
        let message1 = try initiator.writeMessage1(payload: vector.messages[0].payload)
        var forged = message1
        forged[40] ^= 0x80
        #expect(throws: SecurityError.self) { try responder.readMessage1(forged) }
        #expect(try responder.readMessage1(message1) == vector.messages[0].payload)
        let (message2, _) = try responder.writeMessage2(payload: vector.messages[1].payload)
        #expect(message2 == vector.messages[1].ciphertext)
    }

    @Test func aWrongPSKOrPrologueFailsAuthentication() throws {
        let vector = try Cacophony.load()
        var initiator = try NoiseInitiator(
            psk: vector.psk, prologue: vector.prologue, ephemeral: vector.initiatorEphemeral)
        let message1 = try initiator.writeMessage1(payload: [1, 2, 3])
        var otherKey = try NoiseResponder(psk: SymmetricKey(size: .bits256), prologue: vector.prologue)
        let error = #expect(throws: SecurityError.self) { try otherKey.readMessage1(message1) }
        #expect(error?.code == .authenticationFailed)
        var otherPrologue = try NoiseResponder(psk: vector.psk, prologue: vector.prologue + [0])
        #expect(throws: SecurityError.self) { try otherPrologue.readMessage1(message1) }
    }
}

@Suite struct NoiseCipherStateTests {
    @Test func aFailedDecryptNeverAdvancesTheNonce() throws {
        let key = SymmetricKey(size: .bits256)
        var sender = NoiseCipherState()
        var receiver = NoiseCipherState()
        sender.initializeKey(key)
        receiver.initializeKey(key)
        let first = try sender.encrypt([1, 2, 3], associatedData: [9])
        var forged = first
        forged[0] ^= 1
        #expect(throws: SecurityError.self) { try receiver.decrypt(forged, associatedData: [9]) }
        #expect(throws: SecurityError.self) { try receiver.decrypt(first, associatedData: [8]) }
        #expect(receiver.nonce == 0)
        #expect(try receiver.decrypt(first, associatedData: [9]) == [1, 2, 3])
        #expect(receiver.nonce == 1)
        #expect(sender.nonce == 1)
    }

    @Test func withoutAKeyTheCipherStatePassesBytesThrough() throws {
        var state = NoiseCipherState()
        #expect(try state.encrypt([4, 5], associatedData: []) == [4, 5])
        #expect(state.nonce == 0)
    }
}
