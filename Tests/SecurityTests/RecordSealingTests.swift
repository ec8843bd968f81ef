import AetherIO
import Testing

@testable import AetherSecurity

@Suite struct RecordSealingTests {
    static func pair(sessionID: UInt64 = 77, startingAt counter: UInt64 = 0) throws -> (RecordSealer, RecordOpener) {
        let key = SymmetricKey(size: .bits256)
        return (
            try RecordSealer(key: key, direction: .clientToHost, sessionID: sessionID, nextCounter: counter),
            try RecordOpener(key: key, direction: .clientToHost, sessionID: sessionID)
        )
    }

    @Test func sealAndOpenRoundTripWithTheHeaderAsAssociatedData() throws {
        var (sealer, opener) = try Self.pair()
        let datagram = try sealer.seal(innerType: 0x07, plaintext: Array("payload".utf8))
        #expect(datagram.count == 20 + 7 + 16)
        let header = try RecordHeader.parse(Array(datagram.prefix(20)))
        #expect(header.counter == 0 && header.sessionID == 77 && header.innerType == 0x07)
        #expect(try opener.open(datagram) == .application(type: 0x07, bytes: Array("payload".utf8)))
        #expect(sealer.nextCounter == 1)
        // Changing any header byte breaks authentication (or framing) and marks nothing.
        let next = try sealer.seal(innerType: 0x01, plaintext: [1, 2, 3])
        for index in 0..<20 {
            var tampered = next
            tampered[index] ^= 0x01
            #expect(throws: SecurityError.self, "header byte \(index)") { try opener.open(tampered) }
        }
        #expect(try opener.open(next) == .application(type: 0x01, bytes: [1, 2, 3]))
    }

    @Test func aForgedRecordDoesNotMarkTheWindowSoTheGenuineOneStillOpens() throws {
        var (sealer, opener) = try Self.pair()
        let genuine = try sealer.seal(innerType: 0x00, plaintext: [9])
        var forged = genuine
        forged[forged.count - 1] ^= 0x80
        let error = #expect(throws: SecurityError.self) { try opener.open(forged) }
        #expect(error?.code == .authenticationFailed)
        #expect(opener.window.highest == nil)
        #expect(try opener.open(genuine) == .application(type: 0, bytes: [9]))
        let replay = #expect(throws: SecurityError.self) { try opener.open(genuine) }
        #expect(replay?.code == .replayDetected)
    }

    @Test func counterTwoToThe32IsNeverSealedOrOpened() throws {
        var (sealer, opener) = try Self.pair(startingAt: SessionWire.counterLimit - 1)
        let last = try sealer.seal(innerType: 0x00, plaintext: [1])
        #expect(try opener.open(last) == .application(type: 0, bytes: [1]))
        let error = #expect(throws: SecurityError.self) { try sealer.seal(innerType: 0x00, plaintext: [2]) }
        #expect(error?.code == .limitExceeded)
        #expect(sealer.nextCounter == SessionWire.counterLimit)
        // A record claiming counter 2^32 is rejected before any crypto.
        var beyond = last
        beyond[12..<20] = [0, 0, 0, 1, 0, 0, 0, 0]
        #expect(throws: SecurityError.self) { try opener.open(beyond) }
    }

    @Test func unknownControlTypesAreAuthenticatedButNeverDelivered() throws {
        var (sealer, opener) = try Self.pair()
        for type in [UInt8(0x46), 0x80, 0xff] {
            let content = try opener.open(try sealer.seal(innerType: type, plaintext: [1, 2, 3]))
            #expect(content == .unknownControl(type: type))
            #expect(content.countsForLiveness && !content.provesCommit)
        }
        let malformed = try opener.open(try sealer.seal(innerType: ControlMessage.confirmType, plaintext: [0]))
        #expect(malformed == .malformedControl(type: 0x40))
        #expect(!malformed.provesCommit)
        let confirm = try opener.open(try sealer.seal(.confirm))
        #expect(confirm == .control(.confirm) && confirm.provesCommit)
        let edge = try opener.open(try sealer.seal(innerType: 0x3f, plaintext: [5]))
        #expect(edge == .application(type: 0x3f, bytes: [5]))
    }

    @Test func everyControlMessageRoundTrips() throws {
        var (sealer, opener) = try Self.pair()
        let slots = try SlotStatus(entries: [SlotStatus.Entry(keyID: KeyID(), state: .pending)])
        let messages: [ControlMessage] = [
            .confirm, .bye(.superseded), .countsQuery(queryID: 42),
            .countsAnswer(
                CountsAnswer(
                    queryID: 42, recordsSealed: 1, recordsOpened: 2, authenticationFailures: 3,
                    replaysRejected: 4, unknownControl: 5)),
            .slotStatus(slots), .keepAlive,
        ]
        for message in messages {
            #expect(try opener.open(try sealer.seal(message)) == .control(message))
        }
    }

    @Test func wrongDirectionOrSessionIsRejectedBeforeTheAEAD() throws {
        let key = SymmetricKey(size: .bits256)
        var sealer = try RecordSealer(key: key, direction: .hostToClient, sessionID: 5)
        var wrongDirection = try RecordOpener(key: key, direction: .clientToHost, sessionID: 5)
        var wrongSession = try RecordOpener(key: key, direction: .hostToClient, sessionID: 6)
        let datagram = try sealer.seal(innerType: 0, plaintext: [])
        #expect(throws: SecurityError.self) { try wrongDirection.open(datagram) }
        #expect(throws: SecurityError.self) { try wrongSession.open(datagram) }
    }

    @Test func theLargestRecordFitsAndOneByteMoreIsRefused() throws {
        var (sealer, opener) = try Self.pair()
        let largest = [UInt8](repeating: 0xab, count: SessionWire.maxRecordPlaintext)
        let datagram = try sealer.seal(innerType: 0, plaintext: largest)
        #expect(datagram.count == SessionWire.maxRecordSize)
        #expect(try opener.open(datagram) == .application(type: 0, bytes: largest))
        let error = #expect(throws: SecurityError.self) { try sealer.seal(innerType: 0, plaintext: largest + [0]) }
        #expect(error?.code == .limitExceeded)
        var host = try RecordOpener(
            key: SymmetricKey(size: .bits256), direction: .clientToHost, sessionID: 77, maxPlaintext: 1_200)
        #expect(throws: SecurityError.self) {
            try host.open(try sealer.seal(innerType: 0, plaintext: [UInt8](repeating: 0, count: 1_201)))
        }
    }

    @Test func openingNeverCrashesOnShortOrGarbageDatagrams() throws {
        var (_, opener) = try Self.pair()
        var generator = SecureRandom()
        for length in [0, 1, 19, 20, 35, 36, 37, 100] {
            let garbage = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(throws: SecurityError.self) { try opener.open(garbage) }
        }
    }
}
