import AetherIntegrity
import Foundation

/// `VerifiedManifest.parse` (manifest JSON). Properties: no crash; an accepted manifest's canonical JSON
/// parses back to the same manifest and is a fixed point (canonical JSON of the re-parse is identical);
/// the CID and ACI of an accepted manifest name its file SHA-256 and round-trip through their text forms.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    let data = unsafe Data(bytes)
    guard let manifest = try? VerifiedManifest.parse(data) else { return }
    guard let canonical = try? manifest.canonicalJSON() else {
        FuzzCheck.fail("an accepted manifest has no canonical JSON")
    }
    guard let reparsed = try? VerifiedManifest.parse(canonical) else {
        FuzzCheck.fail("the canonical JSON of an accepted manifest does not parse")
    }
    FuzzCheck.accepted("manifest of \(manifest.chunks.count) chunks")
    FuzzCheck.require(reparsed == manifest, "canonical JSON parses to another manifest")
    FuzzCheck.require((try? reparsed.canonicalJSON()) == canonical, "canonical JSON is not a fixed point")
    FuzzCheck.require(manifest.cid.digest == manifest.fileSHA256, "CID does not name the file digest")
    FuzzCheck.require((try? CIDv1(string: manifest.cid.string)) == manifest.cid, "CID does not round-trip")
    FuzzCheck.require((try? ACI(parsing: manifest.aci.description)) == manifest.aci, "ACI does not round-trip")
}
