import AetherIO
import AetherIntegrity

/// Identifier parsers of AetherIntegrity: `CIDv1(string:)`, `CIDv1(bytes:)`, `ACI(parsing:)`,
/// `DigestHex.parse`, `ChunkingAlgorithm.parse` and the ACI <-> CIDv1 conversions, all on the same input.
/// Properties: no crash; every accepted text or byte form is the canonical one (re-encodes to exactly the
/// input); errors are `.malformedIdentifier` (`.malformedManifest`/`.unsupported` for chunking names);
/// the conversions of the parseable identifiers round-trip.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    let raw = unsafe Array(bytes)
    let text = String(decoding: raw, as: UTF8.self)

    let cid: CIDv1?
    do { cid = try CIDv1(string: text) } catch {
        FuzzCheck.require(error.code == .malformedIdentifier, "CID: a reject must be malformedIdentifier")
        cid = nil
    }
    if let cid {
        FuzzCheck.accepted("CID")
        FuzzCheck.require(cid.string == text, "an accepted CID is not canonical")
    }
    if let fromBytes = try? CIDv1(bytes: raw) {
        FuzzCheck.require(fromBytes.bytes == raw, "an accepted binary CID does not re-encode")
    }

    let aci: ACI?
    do { aci = try ACI(parsing: text) } catch {
        FuzzCheck.require(error.code == .malformedIdentifier, "ACI: a reject must be malformedIdentifier")
        aci = nil
    }
    if let aci {
        FuzzCheck.accepted("ACI")
        FuzzCheck.require(aci.description == text, "an accepted ACI is not canonical")
    }

    if let digest = try? DigestHex.parse(text) {
        FuzzCheck.require(digest.hex == text, "an accepted digest is not 64 lowercase hex digits")
    }
    if let algorithm = try? ChunkingAlgorithm.parse(text) {
        FuzzCheck.require(algorithm.rawValue == text && algorithm.isImplemented, "chunking name accepted wrongly")
    }

    // The conversions (the same digest under the other name) round-trip through the text forms.
    if let cid {
        let toACI = ACI(digest: cid.digest).description
        FuzzCheck.require((try? ACI(parsing: toACI))?.digest == cid.digest, "CID → ACI does not parse back")
        FuzzCheck.require(CIDv1(digest: ACI(digest: cid.digest).digest).string == text, "CID → ACI → CID differs")
    }
    if let aci {
        let toCID = CIDv1(digest: aci.digest).string
        FuzzCheck.require((try? CIDv1(string: toCID))?.digest == aci.digest, "ACI → CID does not parse back")
        FuzzCheck.require(ACI(digest: CIDv1(digest: aci.digest).digest).description == text, "ACI → CID → ACI differs")
    }
}
