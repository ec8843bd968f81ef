import AetherIO
import Foundation
import Testing

@testable import AetherSecurity

@Suite struct SPKIPinTests {
    @Test func pinsMatchTheOpenSSLCommandLine() throws {
        let pki = try TestPKI.get()
        for name in ["root", "intA", "intB", "leafA", "leafB"] {
            #expect(try SPKIPin(certificateDER: pki.der(name)) == pki.pin(name))
        }
        let pem = try pki.bytes("leafA.pem") + pki.bytes("intA.pem")
        #expect(try SPKIPin.pins(certificatesPEM: pem) == [pki.pin("leafA"), pki.pin("intA")])
    }

    @Test func base64IsCanonicalAndRoundTrips() throws {
        let pin = try TestPKI.get().pin("intA")
        #expect(pin.base64.count == 44)
        #expect(try SPKIPin(base64: pin.base64) == pin)
        #expect("\(pin)" == pin.base64)
        for bad in ["", "abc", String(pin.base64.dropLast()), pin.base64 + "=", "!" + pin.base64.dropFirst()] {
            #expect(throws: SecurityError.self) { try SPKIPin(base64: bad) }
        }
    }

    @Test func garbageTruncatedOrPaddedDERIsRefused() throws {
        let der = try TestPKI.get().der("leafA")
        for bad in [[UInt8](), [0x30, 0x03, 0x02, 0x01, 0x00], Array(der.dropLast()), der + [0], Array("junk".utf8)] {
            let error = #expect(throws: SecurityError.self) { try SPKIPin(certificateDER: bad) }
            #expect(error?.code == .malformedMessage)
        }
        #expect(throws: SecurityError.self) { try SPKIPin.pins(certificatesPEM: Array("no certificate".utf8)) }
        let damaged = Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8)
        #expect(throws: SecurityError.self) { try SPKIPin.pins(certificatesPEM: damaged) }
    }
}
