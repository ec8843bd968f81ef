import AetherIO
import AetherTestSupport
import Foundation
import Testing

@testable import AetherSecurity

@Suite struct CertificatePinManagerTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    func manager(
        ca: [String], leaf: [String] = [], clock: ManualClock, pki: TestPKI
    ) throws -> CertificatePinManager {
        let configuration = try PinConfiguration(
            caPins: Set(ca.map { try pki.pin($0) }), emergencyLeafPins: Set(leaf.map { try pki.pin($0) }),
            issuedAt: Self.start.addingTimeInterval(-86_400))
        return CertificatePinManager(configuration: configuration, trustedKeys: [try pki.signingKey()], clock: clock)
    }

    @Test func aMatchingIntermediatePinAcceptsTheChain() throws {
        let pki = try TestPKI.get()
        let pins = try manager(ca: ["intA"], clock: ManualClock(Self.start), pki: pki)
        #expect(try pins.validate(chain: [pki.der("leafA"), pki.der("intA")]) == .caPin)
        #expect(try pins.validate(chain: [pki.der("leafA"), pki.der("intA"), pki.der("root")]) == .caPin)
        let error = #expect(throws: SecurityError.self) {
            try pins.validate(chain: [pki.der("leafB"), pki.der("intB")])
        }
        #expect(error?.code == .pinMismatch)
    }

    @Test func aCAPinOnTheLeafPositionDoesNotCount() throws {
        // CA pins are checked against certificates above the leaf only.
        let pki = try TestPKI.get()
        let pins = try manager(ca: ["leafA"], clock: ManualClock(Self.start), pki: pki)
        #expect(throws: SecurityError.self) { try pins.validate(chain: [pki.der("leafA"), pki.der("intA")]) }
    }

    @Test func emergencyLeafPinsApplyOnlyWhenNoCAPinMatches() throws {
        let pki = try TestPKI.get()
        let pins = try manager(ca: ["intA"], leaf: ["leafB"], clock: ManualClock(Self.start), pki: pki)
        #expect(try pins.validate(chain: [pki.der("leafB"), pki.der("intB")]) == .emergencyLeafPin)
        #expect(try pins.validate(chain: [pki.der("leafB")]) == .emergencyLeafPin)
        // Intermediates are checked first: a CA match wins over a leaf pin.
        #expect(try pins.validate(chain: [pki.der("leafB"), pki.der("intA")]) == .caPin)
        #expect(throws: SecurityError.self) { try pins.validate(chain: [pki.der("leafA"), pki.der("intB")]) }
    }

    @Test func emptyChainsAndGarbageFailClosed() throws {
        let pki = try TestPKI.get()
        let pins = try manager(ca: ["intA"], leaf: ["leafA"], clock: ManualClock(Self.start), pki: pki)
        let empty = #expect(throws: SecurityError.self) { try pins.validate(chain: []) }
        #expect(empty?.code == .malformedMessage)
        // A garbage certificate anywhere rejects the chain, even beside a matching pin.
        for chain in [
            [Array("garbage".utf8)], [try pki.der("leafA"), Array("garbage".utf8)],
            [Array("garbage".utf8), try pki.der("intA")], [try pki.der("leafA"), [UInt8]()],
        ] {
            let error = #expect(throws: SecurityError.self) { try pins.validate(chain: chain) }
            #expect(error?.code == .malformedMessage)
        }
        #expect(pins.evaluate(spkiChain: []) == nil)
    }

    @Test func backupPinsHoldForSeventyTwoHoursAfterARotation() throws {
        let pki = try TestPKI.get()
        let clock = ManualClock(Self.start)
        let pins = try manager(ca: ["intA"], clock: clock, pki: pki)
        let update = try pki.update(
            pins: [pki.pin("intB")], effective: Self.start.addingTimeInterval(-60),
            expiry: Self.start.addingTimeInterval(7 * 86_400))
        try pins.apply(update)
        #expect(pins.snapshot.caPins == [try pki.pin("intB")])
        #expect(pins.snapshot.backupCAPins == [try pki.pin("intA")])
        let chainA = [try pki.der("leafA"), try pki.der("intA")]
        let chainB = [try pki.der("leafB"), try pki.der("intB")]
        #expect(try pins.validate(chain: chainB) == .caPin)
        #expect(try pins.validate(chain: chainA) == .backupCAPin)
        clock.advance(by: .seconds(72 * 3600 - 1))
        #expect(try pins.validate(chain: chainA) == .backupCAPin)
        clock.advance(by: .seconds(1))
        let error = #expect(throws: SecurityError.self) { try pins.validate(chain: chainA) }
        #expect(error?.code == .pinMismatch)
        #expect(try pins.validate(chain: chainB) == .caPin)
    }

    @Test func everyRejectedRotationLeavesThePinsUntouched() throws {
        let pki = try TestPKI.get()
        let clock = ManualClock(Self.start)
        let pins = try manager(ca: ["intA"], leaf: ["leafB"], clock: clock, pki: pki)
        let before = pins.snapshot
        let newPins = [try pki.pin("intB")]
        let effective = Self.start.addingTimeInterval(-60)
        let expiry = Self.start.addingTimeInterval(86_400)
        let good = try pki.update(pins: newPins, effective: effective, expiry: expiry)

        var rejected: [PinUpdatePayload] = []
        // Signed by another key that claims the trusted key's id.
        rejected.append(try pki.update(pins: newPins, effective: effective, expiry: expiry, keyFile: "small.key"))
        // Named after a key nobody trusts (validly signed by the trusted key, but with another id).
        rejected.append(
            try pki.update(
                pins: newPins, effective: effective, expiry: expiry, keyID: String(repeating: "ab", count: 32)))
        // A valid signature over other pins, transplanted.
        rejected.append(
            try PinUpdatePayload(
                newCAPins: [try pki.pin("root")], effectiveDate: effective, expiryDate: expiry,
                signingKeyID: good.signingKeyID, signature: good.signature))
        // A flipped signature bit.
        var flipped = good.signature
        flipped[flipped.count / 2] ^= 0x04
        rejected.append(
            try PinUpdatePayload(
                newCAPins: newPins, effectiveDate: effective, expiryDate: expiry, signingKeyID: good.signingKeyID,
                signature: flipped))
        // Stale: effective before the embedded pins were issued.
        rejected.append(
            try pki.update(
                pins: newPins, effective: Self.start.addingTimeInterval(-2 * 86_400), expiry: expiry))
        // Not yet effective, and already expired.
        rejected.append(try pki.update(pins: newPins, effective: Self.start.addingTimeInterval(60), expiry: expiry))
        rejected.append(
            try pki.update(pins: newPins, effective: effective, expiry: Self.start.addingTimeInterval(-1)))
        for update in rejected {
            let error = #expect(throws: SecurityError.self) { try pins.apply(update) }
            #expect(error?.code == .invalidPinUpdate)
            #expect(pins.snapshot == before)
        }
        #expect(try pins.validate(chain: [pki.der("leafA"), pki.der("intA")]) == .caPin)

        // The good one applies once; replaying it (same effective date) is stale and changes nothing more.
        try pins.apply(good)
        let after = pins.snapshot
        #expect(after != before)
        let replay = #expect(throws: SecurityError.self) { try pins.apply(good) }
        #expect(replay?.code == .invalidPinUpdate)
        #expect(pins.snapshot == after)
    }

    @Test func signingKeysMustBeRSAOf4096BitsOrMore() throws {
        let pki = try TestPKI.get()
        let small = #expect(throws: SecurityError.self) { try PinSigningKey(pem: pki.text("small.pub")) }
        #expect(small?.code == .invalidKey)
        let ec = #expect(throws: SecurityError.self) { try PinSigningKey(pem: pki.text("root.pub.pem")) }
        #expect(ec?.code == .invalidKey)
        #expect(throws: SecurityError.self) { try PinSigningKey(pem: "not a key") }
        let key = try pki.signingKey()
        #expect(key.id.count == 64)
    }

    @Test func theEmbeddedProductionKeyLoads() throws {
        let key = try EmbeddedPinSigningKey.load()
        #expect(key.id == EmbeddedPinSigningKey.id)
        let pki = try TestPKI.get()
        let configuration = try PinConfiguration(caPins: [pki.pin("intA")], issuedAt: Self.start)
        let pins = try CertificatePinManager(configuration: configuration, clock: ManualClock(Self.start))
        // An update signed by a test key is refused by a manager that trusts only the embedded key.
        let update = try pki.update(
            pins: [pki.pin("intB")], effective: Self.start.addingTimeInterval(60),
            expiry: Self.start.addingTimeInterval(86_400))
        #expect(throws: SecurityError.self) { try pins.apply(update) }
    }

    @Test func configurationsNeedACAPin() throws {
        #expect(throws: SecurityError.self) { try PinConfiguration(caPins: [], issuedAt: Self.start) }
    }
}

@Suite struct PinUpdatePayloadTests {
    @Test func theSignedBytesAreTheDocumentedCanonicalEncoding() throws {
        let low = SPKIPin(digest: try Digest32(bytes: [UInt8](repeating: 0x11, count: 32)))
        let high = SPKIPin(digest: try Digest32(bytes: [UInt8](repeating: 0xEE, count: 32)))
        // Pins are sorted, so the order they are given in does not change the signed bytes.
        let bytes = PinUpdatePayload.signedBytes(
            newCAPins: [high, low], effectiveSeconds: 0x0102_0304, expirySeconds: 0x0506_0708, signingKeyID: "k1")
        let expectedHex =
            "4145544845522d50494e2d5550444154452d763100" + "02" + "6b31" + "0000000001020304" + "0000000005060708"
            + "02" + String(repeating: "11", count: 32) + String(repeating: "ee", count: 32)
        #expect(Hex.encode(bytes) == expectedHex)
        #expect(
            PinUpdatePayload.signedBytes(
                newCAPins: [low, high], effectiveSeconds: 0x0102_0304, expirySeconds: 0x0506_0708, signingKeyID: "k1")
                == bytes)
    }

    @Test func jsonRoundTripsAndMalformedPayloadsAreRefused() throws {
        let pki = try TestPKI.get()
        let update = try pki.update(
            pins: [pki.pin("intA"), pki.pin("intB")], effective: Date(timeIntervalSince1970: 1_800_000_000),
            expiry: Date(timeIntervalSince1970: 1_800_086_400))
        let json = try update.jsonBytes()
        #expect(try PinUpdatePayload(json: json) == update)
        #expect(try pki.signingKey().verifies(PinUpdatePayload(json: json)))

        let pin = try pki.pin("intA").base64
        let bad: [String] = [
            "", "[]", "{}", "not json",
            #"{"version":2,"newCAPins":["\#(pin)"],"effectiveDate":1,"expiryDate":2,"signingKeyId":"k","signature":"AA=="}"#,
            #"{"version":1,"newCAPins":[],"effectiveDate":1,"expiryDate":2,"signingKeyId":"k","signature":"AA=="}"#,
            #"{"version":1,"newCAPins":["\#(pin)","\#(pin)"],"effectiveDate":1,"expiryDate":2,"signingKeyId":"k","signature":"AA=="}"#,
            #"{"version":1,"newCAPins":["\#(pin)"],"effectiveDate":2,"expiryDate":2,"signingKeyId":"k","signature":"AA=="}"#,
            #"{"version":1,"newCAPins":["\#(pin)"],"effectiveDate":1,"expiryDate":2,"signingKeyId":"","signature":"AA=="}"#,
            #"{"version":1,"newCAPins":["\#(pin)"],"effectiveDate":1,"expiryDate":2,"signingKeyId":"k","signature":""}"#,
            #"{"version":1,"newCAPins":["short"],"effectiveDate":1,"expiryDate":2,"signingKeyId":"k","signature":"AA=="}"#,
            #"{"version":1,"newCAPins":["\#(pin)"],"effectiveDate":1.5,"expiryDate":2,"signingKeyId":"k","signature":"AA=="}"#,
        ]
        for text in bad {
            let error = #expect(throws: SecurityError.self) { try PinUpdatePayload(json: Array(text.utf8)) }
            #expect(error?.code == .malformedMessage)
        }
        #expect(throws: SecurityError.self) {
            try PinUpdatePayload(
                newCAPins: [pki.pin("intA")], effectiveDate: Date(timeIntervalSince1970: 1.5),
                expiryDate: Date(timeIntervalSince1970: 10), signingKeyID: "k", signature: [1])
        }
    }
}
