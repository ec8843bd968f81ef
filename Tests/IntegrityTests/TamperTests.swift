import AetherIO
import Foundation
import Testing

@testable import AetherIntegrity

/// Property tests: changing any single byte of a proof, chunk hash, chain link or manifest is detected.
@Suite struct TamperTests {
    /// Flips one byte at a random position by a random non-zero mask.
    private static func tamper(_ bytes: [UInt8], using generator: inout SplitMix64) -> ([UInt8], Int) {
        var copy = bytes
        let position = Int.random(in: 0..<bytes.count, using: &generator)
        copy[position] ^= UInt8.random(in: 1...255, using: &generator)
        return (copy, position)
    }

    @Test func anyChangedByteOfAProofFailsToParseOrToVerify() throws {
        var generator = SplitMix64(seed: 11)
        let hashes = IntegrityVectors.chunkHashes(300)
        let builder = try MerkleProofBuilder(chunkHashes: hashes)
        let root = builder.root
        for _ in 0..<500 {
            let index = Int.random(in: 0..<300, using: &generator)
            let bytes = try builder.proof(forLeaf: index).serialized()
            let (tampered, position) = Self.tamper(bytes, using: &generator)
            if let proof = try? MerkleProof(serialized: tampered) {
                #expect(
                    !proof.verify(chunkHash: hashes[index], root: root, leafCount: 300),
                    "byte \(position) of leaf \(index)'s proof")
            }
        }
    }

    @Test func anyChangedByteOfAChunkHashFailsItsProof() throws {
        var generator = SplitMix64(seed: 12)
        let hashes = IntegrityVectors.chunkHashes(77)
        let builder = try MerkleProofBuilder(chunkHashes: hashes)
        for _ in 0..<300 {
            let index = Int.random(in: 0..<77, using: &generator)
            let (tampered, position) = Self.tamper(hashes[index].bytes, using: &generator)
            let proof = try builder.proof(forLeaf: index)
            #expect(
                !proof.verify(chunkHash: try Digest32(bytes: tampered), root: builder.root, leafCount: 77),
                "byte \(position)")
        }
    }

    @Test func anyChangedByteOfAChainLinkBreaksTheChainThere() throws {
        var generator = SplitMix64(seed: 13)
        var chain = try ChunkCommitmentChain(sessionID: "tamper", plannedChunkCount: 60)
        let hashes = IntegrityVectors.chunkHashes(60)
        let links = hashes.map { chain.append($0) }
        for _ in 0..<300 {
            let index = Int.random(in: 0..<60, using: &generator)
            var tamperedLinks = links
            tamperedLinks[index] = try Digest32(bytes: Self.tamper(links[index].bytes, using: &generator).0)
            #expect(
                try ChunkCommitmentChain.verifyForward(
                    sessionID: "tamper", stride: chain.stride, chunkHashes: hashes, links: tamperedLinks,
                    jumpLinks: chain.jumpLinks) == .broken(atChunk: index))
            let jump = Int.random(in: 0..<chain.jumpLinks.count, using: &generator)
            var tamperedJumps = chain.jumpLinks
            tamperedJumps[jump] = try Digest32(bytes: Self.tamper(tamperedJumps[jump].bytes, using: &generator).0)
            #expect(
                try ChunkCommitmentChain.verifyBackward(
                    sessionID: "tamper", stride: chain.stride, chunkHashes: hashes, links: links,
                    jumpLinks: tamperedJumps)
                    != .intact(count: 60))
        }
    }

    /// A changed byte anywhere in a manifest either makes it unparseable or makes the original
    /// file fail verification against it: no single-byte edit yields a manifest the file still matches.
    @Test func anyChangedByteOfAManifestIsDetected() throws {
        var generator = SplitMix64(seed: 14)
        let file = SampleFile(size: 300, chunkSize: 64, seed: 9)
        let manifest = try file.manifest(session: "séance")
        let bytes = Array(try manifest.canonicalJSON())
        let fileDigest = SHA256.hash(file.bytes)
        for _ in 0..<600 {
            let (tampered, position) = Self.tamper(bytes, using: &generator)
            guard let parsed = try? VerifiedManifest.parse(Data(tampered)) else { continue }
            #expect(parsed.verify(chunks: file.chunks, fileSHA256: fileDigest) != .intact, "byte \(position)")
        }
    }
}
