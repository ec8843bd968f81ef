import AetherIO
public import FoundationEssentials

/// A server-signed rotation of the CA pins (upload-engine v2.2 "Certificate Pinning Modernization").
///
/// The signature is RSASSA-PSS (SHA-256, MGF1-SHA-256, 32-byte salt) by an RSA-4096 key over `signedBytes`,
/// a canonical binary encoding described in docs/UPLOAD-SECURITY.md. Dates are whole seconds since the Unix
/// epoch, so the JSON form and the signed form carry the same value.
public struct PinUpdatePayload: Sendable, Equatable {
    /// The CA pins that replace the active ones (duplicates are refused).
    public let newCAPins: [SPKIPin]
    /// When the new pins take effect; an update is applied only at or after this time.
    public let effectiveDate: Date
    /// After this time the update is refused (it is stale).
    public let expiryDate: Date
    /// The id of the signing key: lowercase hex SHA-256 of its SubjectPublicKeyInfo DER.
    public let signingKeyID: String
    /// The RSA-PSS signature over `signedBytes`.
    public let signature: [UInt8]

    /// Most CA pins one update may carry.
    public static let maximumPinCount = 64
    /// The domain-separation label at the start of the signed bytes.
    public static let signatureLabel: [UInt8] = Array("AETHER-PIN-UPDATE-v1".utf8) + [0]

    /// Checks the fields' form (not the signature): 1...64 distinct pins, whole-second dates with the expiry after
    /// the effective date, a 1...128-byte printable ASCII key id, a 1...1024-byte signature.
    public init(
        newCAPins: [SPKIPin], effectiveDate: Date, expiryDate: Date, signingKeyID: String, signature: [UInt8]
    ) throws(SecurityError) {
        guard (1...Self.maximumPinCount).contains(newCAPins.count), Set(newCAPins).count == newCAPins.count else {
            throw SecurityError(.malformedMessage, "a pin update carries 1...\(Self.maximumPinCount) distinct pins")
        }
        guard let effective = Self.wholeSeconds(effectiveDate), let expiry = Self.wholeSeconds(expiryDate),
            expiry > effective
        else {
            throw SecurityError(.malformedMessage, "pin update dates are whole seconds with expiry after effective")
        }
        let id = Array(signingKeyID.utf8)
        guard (1...128).contains(id.count), id.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw SecurityError(.malformedMessage, "a signing key id is 1...128 printable ASCII characters")
        }
        guard (1...1024).contains(signature.count) else {
            throw SecurityError(.malformedMessage, "a pin update signature is 1...1024 bytes")
        }
        self.newCAPins = newCAPins
        self.effectiveDate = effectiveDate
        self.expiryDate = expiryDate
        self.signingKeyID = signingKeyID
        self.signature = signature
    }

    /// The bytes the signature covers:
    /// `"AETHER-PIN-UPDATE-v1" 0x00 || u8 len || key id || i64be effective || i64be expiry || u8 n || n sorted pins`.
    public var signedBytes: [UInt8] {
        Self.signedBytes(
            newCAPins: newCAPins, effectiveSeconds: Self.wholeSeconds(effectiveDate) ?? 0,
            expirySeconds: Self.wholeSeconds(expiryDate) ?? 0, signingKeyID: signingKeyID)
    }

    /// The canonical signed bytes for these fields (a signer builds them before it has a signature).
    public static func signedBytes(
        newCAPins: [SPKIPin], effectiveSeconds: Int64, expirySeconds: Int64, signingKeyID: String
    ) -> [UInt8] {
        var out = signatureLabel
        let id = Array(signingKeyID.utf8)
        out.append(UInt8(truncatingIfNeeded: id.count))
        out += id
        for value in [effectiveSeconds, expirySeconds] {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        out.append(UInt8(truncatingIfNeeded: newCAPins.count))
        for pin in newCAPins.sorted() { out += pin.digest.bytes }
        return out
    }

    static func wholeSeconds(_ date: Date) -> Int64? {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds.rounded(.towardZero) == seconds, abs(seconds) < 1e15 else { return nil }
        return Int64(seconds)
    }

    // MARK: JSON

    private struct Wire: Codable {
        var version: Int
        var newCAPins: [String]
        var effectiveDate: Int64
        var expiryDate: Int64
        var signingKeyId: String
        var signature: String
    }

    /// Parses the JSON delivery form:
    /// `{"version":1,"newCAPins":[base64...],"effectiveDate":s,"expiryDate":s,"signingKeyId":"hex","signature":"base64"}`.
    public init(json: [UInt8]) throws(SecurityError) {
        guard json.count <= 64 * 1024 else { throw SecurityError(.malformedMessage, "a pin update is at most 64 KiB") }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(json))
        } catch {
            throw SecurityError(.malformedMessage, "a pin update is not the expected JSON object")
        }
        guard wire.version == 1 else { throw SecurityError(.malformedMessage, "unknown pin update version") }
        var pins: [SPKIPin] = []
        for text in wire.newCAPins { pins.append(try SPKIPin(base64: text)) }
        guard let signature = Data(base64Encoded: wire.signature) else {
            throw SecurityError(.malformedMessage, "the pin update signature is not base64")
        }
        try self.init(
            newCAPins: pins, effectiveDate: Date(timeIntervalSince1970: TimeInterval(wire.effectiveDate)),
            expiryDate: Date(timeIntervalSince1970: TimeInterval(wire.expiryDate)), signingKeyID: wire.signingKeyId,
            signature: Array(signature))
    }

    /// The JSON delivery form (keys sorted).
    public func jsonBytes() throws(SecurityError) -> [UInt8] {
        let wire = Wire(
            version: 1, newCAPins: newCAPins.map(\.base64), effectiveDate: Self.wholeSeconds(effectiveDate) ?? 0,
            expiryDate: Self.wholeSeconds(expiryDate) ?? 0, signingKeyId: signingKeyID,
            signature: Data(signature).base64EncodedString())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return Array(try encoder.encode(wire))
        } catch {
            throw SecurityError(.malformedMessage, "cannot encode the pin update")
        }
    }
}
