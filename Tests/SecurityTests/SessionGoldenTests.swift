import AetherIO
import Testing

@testable import AetherSecurity

/// Reproduces Vectors/session_golden.json (generated with PyPI noiseprotocol) byte for byte.
@Suite struct SessionGoldenTests {
    static var file: [String: Any] { (try? VectorFile.load("session_golden.json")) ?? [:] }
    static var cases: [[String: Any]] { file["handshakes"] as? [[String: Any]] ?? [] }

    @Test func theGoldenFileHasEveryKindOfCase() throws {
        let outcomes = Set(Self.cases.compactMap { $0["outcome"] as? String })
        #expect(
            outcomes == [
                "accepted", "refused:stale", "refused:too_new", "refused:pair_again", "refused:session_busy",
                "refused:tombstone", "unparseable",
            ])
        #expect(Self.cases.count == 16)
        #expect(Self.file["protocol"] as? String == NoiseProtocol.name)
    }

    @Test(arguments: 0..<16)
    func reproducesHandshakeAndRecords(index: Int) throws {
        let cases = Self.cases
        #expect(index < cases.count)
        guard index < cases.count else { return }
        let golden = cases[index]
        let name = try #require(golden["name"] as? String)
        let psk = try SymmetricKey(secureBytes: SecureBytes(copying: VectorFile.hex(golden["psk"])))
        let keyID = try KeyID(bytes: VectorFile.hex(golden["key_id"]))
        let attemptID = try #require(golden["attempt_id"] as? UInt64)
        let intentByte = try #require(golden["intent"] as? UInt8)
        let intent = try #require(HelloIntent(rawValue: intentByte))
        let timestamp = try #require(golden["timestamp"] as? UInt64)
        let previous = try #require(golden["previous_session_id"] as? UInt64)
        let hello = try Hello(intent: intent, timestamp: timestamp, keyID: keyID, previousSessionID: previous)
        #expect(hello.encoded() == (try VectorFile.hex(golden["hello"])), "\(name)")
        let initiatorEphemeral = try X25519.PrivateKey(
            secureBytes: SecureBytes(copying: VectorFile.hex(golden["initiator_ephemeral"])))
        let responderEphemeral = try X25519.PrivateKey(
            secureBytes: SecureBytes(copying: VectorFile.hex(golden["responder_ephemeral"])))

        var initiator = try SessionInitiator(
            hello: hello, psk: psk, attemptID: attemptID, ephemeral: initiatorEphemeral)
        let expectedMessage1 = try VectorFile.hex(golden["message1"])
        #expect(initiator.message1 == expectedMessage1, "\(name)")
        let message1 = try Message1.parse(initiator.message1)
        var responder = try SessionResponder(message1: message1, psk: psk, ephemeral: responderEphemeral)
        #expect(responder.hello == hello)

        let payload = try VectorFile.hex(golden["payload"])
        let accept = try? Accept.parse(payload)
        let (message2, hostChannel) = try responder.answer(rawPayload: payload, accept: accept)
        #expect(message2 == (try VectorFile.hex(golden["message2"])), "\(name)")

        // The handshake hash, through the Noise layer with the same prologue.
        var noise = try NoiseInitiator(psk: psk, prologue: message1.prologue, ephemeral: initiatorEphemeral)
        _ = try noise.writeMessage1(payload: hello.encoded())
        let noiseResult = try noise.readMessage2(Array(message2[10...]))
        #expect(noiseResult.keys.handshakeHash.hex == golden["handshake_hash"] as? String, "\(name)")

        let outcome = try initiator.receive(message2: message2)
        #expect(initiator.isFinished)
        let expectedOutcome = try #require(golden["outcome"] as? String)
        switch outcome {
        case .accepted(let parsed, var clientChannel):
            #expect(expectedOutcome == "accepted", "\(name)")
            #expect(parsed.encoded() == payload)
            var host = try #require(hostChannel)
            let records = golden["records"] as? [[String: Any]] ?? []
            var checked = 0
            for record in records {
                try Self.check(record, client: &clientChannel, host: &host, name: name)
                checked += 1
            }
            #expect(checked == records.count)
        case .refused(let refusal):
            #expect(expectedOutcome == "refused:" + Self.refusalName(refusal), "\(name)")
            #expect(refusal.encoded() == payload)
            #expect(hostChannel == nil)
        case .unparseable:
            #expect(expectedOutcome == "unparseable", "\(name)")
        }
    }

    static func refusalName(_ payload: Message2Payload) -> String {
        switch payload {
        case .accept: "accept"
        case .stale: "stale"
        case .tooNew: "too_new"
        case .pairAgain: "pair_again"
        case .sessionBusy: "session_busy"
        case .tombstone: "tombstone"
        }
    }

    static func contentName(_ content: RecordContent) -> String {
        switch content {
        case .application: "application"
        case .control: "control"
        case .unknownControl: "unknown_control"
        case .malformedControl: "malformed_control"
        }
    }

    static func check(
        _ record: [String: Any], client: inout SessionChannel, host: inout SessionChannel, name: String
    ) throws {
        let directionByte = try #require(record["direction"] as? UInt8)
        let direction = try #require(RecordDirection(rawValue: directionByte))
        let innerType = try #require(record["inner_type"] as? UInt8)
        let counter = try #require(record["counter"] as? UInt64)
        let plaintext: [UInt8]
        if let size = record["plaintext_pattern"] as? Int {
            plaintext = (0..<size).map { UInt8($0 % 251) }
        } else {
            plaintext = try VectorFile.hex(record["plaintext"])
        }
        let sending = direction == .clientToHost ? client.sealer : host.sealer
        var sealer = try RecordSealer(
            key: sending.key, direction: direction, sessionID: sending.sessionID, nextCounter: counter)
        let datagram = try sealer.seal(innerType: innerType, plaintext: plaintext)
        if let digest = record["datagram_sha256"] as? String {
            #expect(SHA256.hash(datagram).hex == digest, "\(name) counter \(counter)")
        } else {
            #expect(datagram == (try VectorFile.hex(record["datagram"])), "\(name) counter \(counter)")
        }
        let content =
            direction == .clientToHost ? try host.opener.open(datagram) : try client.opener.open(datagram)
        #expect(contentName(content) == record["content"] as? String, "\(name) counter \(counter)")
        if case .application(let type, let bytes) = content {
            #expect(type == innerType && bytes == plaintext)
        }
        #expect(
            content.provesCommit
                == (record["content"] as? String == "application" || record["content"] as? String == "control"))
    }

    @Test func everyRejectCaseIsRejectedByItsParser() throws {
        let rejects = try #require(Self.file["rejects"] as? [[String: Any]])
        var checked = 0
        for reject in rejects {
            let parser = try #require(reject["parser"] as? String)
            #expect(SessionParserTable.names.contains(parser))
            let bytes = try VectorFile.hex(reject["hex"])
            #expect(throws: SecurityError.self, "\(parser): \(reject["why"] ?? "")") {
                try SessionParserTable.parse(parser, bytes)
            }
            checked += 1
        }
        #expect(checked == rejects.count && checked >= 60)
        #expect(Set(rejects.compactMap { $0["parser"] as? String }) == Set(SessionParserTable.names))
    }

    @Test func theReplayScriptMarksOnlyAuthenticatedFreshCounters() throws {
        let script = try #require(Self.file["replay_script"] as? [String: Any])
        let counters = try #require(script["counters"] as? [UInt64])
        let forged = try VectorFile.hex(script["forged"])
        let expected = try VectorFile.hex(script["expected"])
        #expect(counters.count == 3_000)
        let golden = try #require(Self.cases.first { $0["name"] as? String == script["case"] as? String })
        let keys = try Self.sessionKeys(golden)
        var opener = try RecordOpener(
            key: keys.responderToInitiator, direction: .hostToClient, sessionID: 0x1122_3344_5566_7788)
        var accepted = 0
        for (index, counter) in counters.enumerated() {
            let isForged = forged[index / 8] & (0x80 >> UInt8(index % 8)) != 0
            let wantAccept = expected[index / 8] & (0x80 >> UInt8(index % 8)) != 0
            var sealer = try RecordSealer(
                key: keys.responderToInitiator, direction: .hostToClient, sessionID: 0x1122_3344_5566_7788,
                nextCounter: counter)
            var datagram = try sealer.seal(innerType: 0x00, plaintext: [UInt8(index & 0xff)])
            if isForged { datagram[datagram.count - 1] ^= 0x01 }
            let opened = (try? opener.open(datagram)) != nil
            #expect(opened == wantAccept, "step \(index) counter \(counter)")
            if opened { accepted += 1 }
        }
        #expect(accepted > 1_000)
    }

    static func sessionKeys(_ golden: [String: Any]) throws -> NoiseTransportKeys {
        let psk = try SymmetricKey(secureBytes: SecureBytes(copying: VectorFile.hex(golden["psk"])))
        let message1 = try Message1.parse(VectorFile.hex(golden["message1"]))
        let ephemeral = try X25519.PrivateKey(
            secureBytes: SecureBytes(copying: VectorFile.hex(golden["initiator_ephemeral"])))
        var noise = try NoiseInitiator(psk: psk, prologue: message1.prologue, ephemeral: ephemeral)
        #expect(
            try noise.writeMessage1(payload: Hello.parse(VectorFile.hex(golden["hello"])).encoded())
                == message1.noiseMessage)
        return try noise.readMessage2(Array(VectorFile.hex(golden["message2"])[10...])).keys
    }
}
