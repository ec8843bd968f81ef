import AetherIO
import AetherIntegrity
import Foundation

/// `MerkleProof(serialized:)` (binary) and `MerkleProof`'s strict JSON decoding; the first byte selects
/// which. Properties: no crash (also computing the root of an accepted proof); an accepted binary proof
/// re-serializes to exactly the input; an accepted JSON proof re-encodes to JSON that decodes to the same
/// proof; both encodings of an accepted proof parse back to it; errors are `.malformedProof`.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    let selector = cursor.u8() % 2
    let input = cursor.rest
    let proof: MerkleProof
    if selector == 0 {
        do {
            proof = try MerkleProof(serialized: input)
        } catch {
            FuzzCheck.require(error.code == .malformedProof, "binary proof: a reject must be malformedProof")
            return
        }
        FuzzCheck.require(proof.serialized() == input, "an accepted binary proof does not re-serialize to its bytes")
    } else {
        guard let decoded = try? JSONDecoder().decode(MerkleProof.self, from: Data(input)) else { return }
        proof = decoded
        guard let json = try? JSONEncoder().encode(proof) else { FuzzCheck.fail("an accepted proof does not encode") }
        FuzzCheck.require(
            (try? JSONDecoder().decode(MerkleProof.self, from: json)) == proof, "JSON proof does not round-trip")
    }
    FuzzCheck.accepted("proof of leaf \(proof.leafIndex) of \(proof.leafCount)")
    FuzzCheck.require(proof.leafIndex < proof.leafCount, "a proof's leaf is outside its tree")
    FuzzCheck.require((try? MerkleProof(serialized: proof.serialized())) == proof, "binary proof does not round-trip")
    let root = proof.root(forChunkHash: .zero)
    FuzzCheck.require(
        proof.verify(chunkHash: .zero, root: root, leafCount: proof.leafCount),
        "a proof does not verify against its own root")
    if proof.leafCount < UInt64.max {
        FuzzCheck.require(
            !proof.verify(chunkHash: .zero, root: root, leafCount: proof.leafCount + 1),
            "a proof verifies under another leaf count")
    }
}
