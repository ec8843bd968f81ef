import AetherIO
import AetherIntegrity

/// Identifier parsers of AetherIntegrity: `CIDv1(string:)`, `CIDv1(bytes:)`, `ACI(parsing:)`,
/// `DigestHex.parse`, `ChunkingAlgorithm.parse` and the `CIDMapper` conversions, all on the same input.
/// Properties: no crash; every accepted text or byte form is the canonical one (re-encodes to exactly the
/// input); errors are `.malformedIdentifier` (`.malformedManifest`/`.unsupported` for chunking names);
/// CIDMapper converts exactly the parseable identifiers, and the conversions round-trip.
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

    let toACI = try? CIDMapper.aciString(fromCID: text)
    FuzzCheck.require((toACI != nil) == (cid != nil), "CIDMapper converts other CIDs than CIDv1 parses")
    if let toACI { FuzzCheck.require((try? CIDMapper.cidString(fromACI: toACI)) == text, "CID → ACI → CID differs") }
    let toCID = try? CIDMapper.cidString(fromACI: text)
    FuzzCheck.require((toCID != nil) == (aci != nil), "CIDMapper converts other ACIs than ACI parses")
    if let toCID { FuzzCheck.require((try? CIDMapper.aciString(fromCID: toCID)) == text, "ACI → CID → ACI differs") }
}
