public import AetherIO
import FoundationEssentials

/// A certificate pin: the SHA-256 of a certificate's DER SubjectPublicKeyInfo (the HPKP "pin-sha256" value).
/// Pins survive certificate renewal with the same key, and the verifier never trusts a pin over a broken chain.
public struct SPKIPin: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 32-byte SHA-256 of the SPKI DER.
    public let digest: Digest32

    /// Wraps a digest.
    public init(digest: Digest32) { self.digest = digest }

    /// Parses the canonical base64 form (44 characters, as in HPKP's `pin-sha256="..."`).
    public init(base64: String) throws(SecurityError) {
        guard let data = Data(base64Encoded: base64), data.count == 32, data.base64EncodedString() == base64,
            let digest = try? Digest32(bytes: Array(data))
        else { throw SecurityError(.malformedMessage, "a pin is the base64 of 32 bytes (44 characters)") }
        self.digest = digest
    }

    /// The pin of one DER certificate. Anything but exactly one parseable certificate throws `.malformedMessage`.
    public init(certificateDER: [UInt8]) throws(SecurityError) {
        guard let spki = OpenSSL.subjectPublicKeyInfoDER(certificateDER: certificateDER) else {
            throw SecurityError(.malformedMessage, "not a DER X.509 certificate")
        }
        digest = SHA256.hash(spki)
    }

    /// The pins of every certificate in a PEM text, in file order.
    public static func pins(certificatesPEM pem: [UInt8]) throws(SecurityError) -> [SPKIPin] {
        guard let certificates = OpenSSL.certificatesDER(pem: pem) else {
            throw SecurityError(.malformedMessage, "no PEM certificate, or a damaged one")
        }
        var pins: [SPKIPin] = []
        for der in certificates { pins.append(try SPKIPin(certificateDER: der)) }
        return pins
    }

    /// Every certificate in a PEM text, as DER, in file order.
    public static func certificatesDER(pem: [UInt8]) throws(SecurityError) -> [[UInt8]] {
        guard let certificates = OpenSSL.certificatesDER(pem: pem) else {
            throw SecurityError(.malformedMessage, "no PEM certificate, or a damaged one")
        }
        return certificates
    }

    /// Standard base64 of the digest (44 characters).
    public var base64: String { Data(digest.bytes).base64EncodedString() }

    /// Lowercase hex of the digest.
    public var hex: String { digest.hex }

    /// The base64 form.
    public var description: String { base64 }

    /// Byte-wise order, used by the canonical encoding of a pin update.
    public static func < (lhs: SPKIPin, rhs: SPKIPin) -> Bool {
        lhs.digest.bytes.lexicographicallyPrecedes(rhs.digest.bytes)
    }
}
