import AetherIO
import Testing

@testable import AetherSecurity

@Suite struct SessionHandshakeTests {
    static var accept: Accept {
        get throws {
            try Accept(
                sessionID: 0xfeed, hostTime: 1_764_460_800_000, livenessTimeoutMilliseconds: 15_000,
                maxSessionAgeSeconds: 3_600, maxCounter: 1 << 31, maxRecordPlaintext: 1_200,
                slots: SlotStatus(entries: []), hostName: "test host")
        }
    }

    static func start() throws -> (SessionInitiator, SessionResponder, SymmetricKey) {
        let psk = SymmetricKey(size: .bits256)
        let hello = try Hello(intent: .connect, timestamp: 1_764_460_800_000, keyID: KeyID(), previousSessionID: 0)
        let initiator = try SessionInitiator(hello: hello, psk: psk)
        #expect(initiator.message1.count == SessionWire.message1Size)
        let responder = try SessionResponder(message1: Message1.parse(initiator.message1), psk: psk)
        #expect(responder.hello == hello)
        return (initiator, responder, psk)
    }

    @Test func aFullConnectOpensAChannelBothWaysAndTheConfirmProvesTheCommit() throws {
        var (initiator, responder, _) = try Self.start()
        let (message2, hostChannel) = try responder.answer(.accept(try Self.accept))
        guard case .accepted(let accept, var client) = try initiator.receive(message2: message2) else {
            Issue.record("not accepted")
            return
        }
        var host = try #require(hostChannel)
        #expect(accept == (try Self.accept))
        let confirm = try host.opener.open(try client.sealer.seal(.confirm))
        #expect(confirm == .control(.confirm) && confirm.provesCommit)
        let reply = try client.opener.open(try host.sealer.seal(innerType: 0x01, plaintext: [1, 2]))
        #expect(reply == .application(type: 1, bytes: [1, 2]))
        // Both sides enforce the Accept's max record plaintext toward the host.
        let limit = #expect(throws: SecurityError.self) {
            try client.sealer.seal(innerType: 0, plaintext: [UInt8](repeating: 0, count: 1_201))
        }
        #expect(limit?.code == .limitExceeded)
        var unlimited = try RecordSealer(
            key: client.sealer.key, direction: .clientToHost, sessionID: client.sessionID, nextCounter: 1)
        let tooLong = try unlimited.seal(innerType: 0, plaintext: [UInt8](repeating: 0, count: 1_201))
        #expect(throws: SecurityError.self) { try host.opener.open(tooLong) }
    }

    @Test func aMessage2ThatFailsFramingOrAuthenticationChangesNothing() throws {
        var (initiator, responder, _) = try Self.start()
        let (message2, _) = try responder.answer(.accept(try Self.accept))
        var otherAttempt = message2
        otherAttempt[9] ^= 0x01
        var wrongType = message2
        wrongType[0] = 0x03
        var forgedTag = message2
        forgedTag[forgedTag.count - 1] ^= 0x01
        var forgedKey = message2
        forgedKey[12] ^= 0x40
        for bad in [otherAttempt, wrongType, forgedTag, forgedKey, Array(message2.prefix(57)), message2 + [0]] {
            #expect(throws: SecurityError.self) { try initiator.receive(message2: bad) }
            #expect(!initiator.isFinished)
        }
        guard case .accepted = try initiator.receive(message2: message2) else {
            Issue.record("the valid message 2 was not accepted after the bad ones")
            return
        }
    }

    @Test func anAuthenticatedButUnparseablePayloadEndsTheAttempt() throws {
        var (initiator, responder, _) = try Self.start()
        let copy = responder
        let (garbage, channel) = try responder.answer(rawPayload: [0x01, 0x02], accept: nil)
        #expect(channel == nil)
        guard case .unparseable = try initiator.receive(message2: garbage) else {
            Issue.record("expected unparseable")
            return
        }
        #expect(initiator.isFinished)
        // A valid answer to the same message 1 now comes too late.
        var second = copy
        let (valid, _) = try second.answer(.accept(try Self.accept))
        #expect(throws: SecurityError.self) { try initiator.receive(message2: valid) }
    }

    @Test func aChangedClearKeyIDOrAttemptIDFailsMessage1() throws {
        let (initiator, _, psk) = try Self.start()
        for position in [2, 9, 10, 25] {
            var tampered = initiator.message1
            tampered[position] ^= 0x01
            let error = #expect(throws: SecurityError.self) {
                try SessionResponder(message1: Message1.parse(tampered), psk: psk)
            }
            #expect(error?.code == .authenticationFailed)
        }
    }

    @Test func aHelloNamingAnotherKeyIsRejectedByTheHost() throws {
        let psk = SymmetricKey(size: .bits256)
        let clearKey = KeyID()
        let hello = try Hello(intent: .connect, timestamp: 5, keyID: KeyID(), previousSessionID: 0)
        var noise = try NoiseInitiator(psk: psk, prologue: Message1.prologue(attemptID: 3, keyID: clearKey))
        let datagram =
            Message1.header(attemptID: 3, keyID: clearKey) + (try noise.writeMessage1(payload: hello.encoded()))
        let error = #expect(throws: SecurityError.self) {
            try SessionResponder(message1: Message1.parse(datagram), psk: psk)
        }
        #expect(error?.code == .malformedMessage)
    }

    @Test func theHostNameIsTruncatedAtAScalarBoundary() throws {
        let name = String(repeating: "é", count: 40)  // 80 bytes
        let accept = try Accept(
            sessionID: 1, hostTime: 1, livenessTimeoutMilliseconds: 1_000, maxSessionAgeSeconds: 60, maxCounter: 4_095,
            maxRecordPlaintext: 1_200, slots: SlotStatus(entries: []), hostName: name)
        #expect(accept.hostName.utf8.count == 64)
        #expect(Accept.truncatedName("a" + name).utf8.count == 63)
        #expect(try Accept.parse(accept.encoded()) == accept)
        #expect(throws: SecurityError.self) {
            try Accept(
                sessionID: 1, hostTime: 1, livenessTimeoutMilliseconds: 1_000, maxSessionAgeSeconds: 60,
                maxCounter: 4_095, maxRecordPlaintext: 1_200, slots: SlotStatus(entries: []), hostName: "a\nb")
        }
    }

    @Test func helloIntentRulesAreEnforced() throws {
        #expect(throws: SecurityError.self) {
            try Hello(intent: .connect, timestamp: 1, keyID: KeyID(), previousSessionID: 9)
        }
        #expect(throws: SecurityError.self) {
            try Hello(intent: .reconnect, timestamp: 1, keyID: KeyID(), previousSessionID: 0)
        }
        #expect(throws: SecurityError.self) {
            try Hello(intent: .promote, timestamp: 0, keyID: KeyID(), previousSessionID: 0)
        }
        let promote = try Hello(intent: .promote, timestamp: 1, keyID: KeyID(), previousSessionID: 9)
        #expect(try Hello.parse(promote.encoded()) == promote)
    }
}

@Suite struct ControlMessageTests {
    @Test func theSingleArgumentParserReadsTheTypeByteThenTheBody() throws {
        #expect(try ControlMessage.parse([0x41, 0x02]) == .bye(.limitReached))
        #expect(try ControlMessage.parse([0x45]) == .keepAlive)
        #expect(ControlMessage.bye(.closed).encoded() == [0x41, 0x00])
        for bad: [UInt8] in [[], [0x46], [0x3f], [0x40, 0x00], [0x42, 0, 0, 0]] {
            #expect(throws: SecurityError.self) { try ControlMessage.parse(bad) }
        }
    }
}

@Suite struct SessionWireTests {
    @Test func theLimitsAddUpAsTheDocumentStates() throws {
        #expect(SessionWire.message1Size == SessionWire.message1HeaderSize + 32 + SessionWire.helloSize + 16)
        #expect(SessionWire.message2MinSize == SessionWire.message2HeaderSize + 32 + 16)
        #expect(SessionWire.message2MaxSize == SessionWire.message2MinSize + SessionWire.message2MaxPayload)
        #expect(SessionWire.maxRecordSize == SessionWire.recordHeaderSize + SessionWire.maxRecordPlaintext + 16)
        #expect(SessionWire.maxRecordSize == 65_507)
        let slots = try SlotStatus(
            entries: (0..<16).map { _ in SlotStatus.Entry(keyID: KeyID(), state: .active) })
        let largest = try Accept(
            sessionID: 1, hostTime: 1, livenessTimeoutMilliseconds: 1_000, maxSessionAgeSeconds: 60,
            maxCounter: 4_095, maxRecordPlaintext: 1_200, slots: slots,
            hostName: String(repeating: "x", count: 100))
        #expect(largest.encoded().count == SessionWire.message2MaxPayload)
        #expect(throws: SecurityError.self) {
            try SlotStatus(entries: (0..<17).map { _ in SlotStatus.Entry(keyID: KeyID(), state: .active) })
        }
    }
}
