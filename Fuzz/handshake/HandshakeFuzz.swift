import AetherIO
import AetherSecurity

/// The handshake as the two sides see the network, with a fixed K_dev: a `SessionResponder` reads the
/// genuine message 1 or a damaged one, and a `SessionInitiator` reads a script of message 2 datagrams
/// (the responder's genuine Accept, damaged, truncated or extended copies, raw bytes).
/// Properties: no crash; a damaged message 1 is refused with a typed error; a message 2 that is not
/// byte-identical to the genuine one fails and changes nothing (the attempt stays open and still accepts
/// the genuine message 2 afterwards, docs/SECURE-SESSION.md); the genuine one ends the attempt with the
/// Accept that was sent and a working channel; after that every message 2 is refused.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    guard let psk = try? SymmetricKey(secureBytes: SecureBytes(copying: (0..<32).map { UInt8($0 * 5 + 3) })),
        let keyID = try? KeyID(bytes: (0..<16).map { UInt8($0 + 1) }),
        let hello = try? Hello(intent: .connect, timestamp: 1_764_460_800_000, keyID: keyID, previousSessionID: 0),
        var initiator = try? SessionInitiator(hello: hello, psk: psk),
        let message1 = try? Message1.parse(initiator.message1),
        var responder = try? SessionResponder(message1: message1, psk: psk),
        let slots = try? SlotStatus(entries: [.init(keyID: keyID, state: .active)]),
        let accept = try? Accept(
            sessionID: 0x1122_3344_5566_7788, hostTime: 1_764_460_800_000, livenessTimeoutMilliseconds: 15_000,
            maxSessionAgeSeconds: 3_600, maxCounter: 1 << 30, maxRecordPlaintext: 1_200, slots: slots,
            hostName: "fuzz"),
        let (message2, hostChannel) = try? responder.answer(.accept(accept)),
        var hostChannel
    else { FuzzCheck.fail("cannot set up the handshake") }
    FuzzCheck.require(responder.hello == hello, "the responder read another hello")

    // Message 1, damaged: the responder refuses it (framing, authentication or hello) with a typed error.
    let damaged1 = damage(initiator.message1, &cursor)
    if damaged1 != initiator.message1 {
        do {
            _ = try SessionResponder(message1: try Message1.parse(damaged1), psk: psk)
            FuzzCheck.fail("a damaged message 1 was accepted")
        } catch {
            FuzzCheck.require(
                error.code == .malformedMessage || error.code == .authenticationFailed,
                "a damaged message 1 refused as \(error.code)")
        }
    }

    var operations = 0
    while !cursor.isEmpty, operations < 32 {
        operations += 1
        let datagram = damage(message2, &cursor)
        let finishedBefore = initiator.isFinished
        let outcome: HandshakeOutcome
        do {
            outcome = try initiator.receive(message2: datagram)
        } catch {
            FuzzCheck.require(initiator.isFinished == finishedBefore, "a refused message 2 changed the attempt")
            FuzzCheck.require(
                finishedBefore || datagram != message2, "the genuine message 2 was refused: \(error.code)")
            continue
        }
        FuzzCheck.require(!finishedBefore, "a message 2 was read after the attempt ended")
        FuzzCheck.require(datagram == message2, "a message 2 that was never sent ended the attempt")
        guard case .accepted(let received, var channel) = outcome else {
            FuzzCheck.fail("the genuine Accept was not accepted")
        }
        FuzzCheck.require(received == accept, "the Accept read is not the Accept sent")
        guard let record = try? channel.sealer.seal(.confirm), let opened = try? hostChannel.opener.open(record) else {
            FuzzCheck.fail("the channels of a finished handshake do not talk")
        }
        FuzzCheck.require(opened == .control(.confirm), "the host opened another record than the confirm sent")
        FuzzCheck.accepted("handshake finished")
    }
}

/// The genuine datagram, or a damaged, truncated or extended copy, or raw bytes, as the script says.
private func damage(_ genuine: [UInt8], _ cursor: inout FuzzCursor) -> [UInt8] {
    let operation = cursor.u8()
    switch operation & 3 {
    case 0: return genuine
    case 1:
        var damaged = genuine
        let position = Int(cursor.u8()) % damaged.count
        damaged[position] ^= max(cursor.u8(), 1)
        return damaged
    case 2:
        let change = Int(cursor.u8())
        return change < 128 ? Array(genuine.dropLast(change % genuine.count + 1)) : genuine + cursor.take(change - 127)
    default:
        let count = Int(cursor.u8())
        return cursor.take(count)
    }
}
