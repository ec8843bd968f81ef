import AetherIO
import AetherIntegrity
import Foundation

/// The resume checkpoint parsers (strict JSON decoding of `IntegrityCheckpoint`, `ChainCheckpoint`,
/// `MerkleCheckpoint`), then resuming from what was accepted; the first byte selects the type.
/// Properties: no crash, also when resuming (`ChunkIntegrityLedger(restoring:)`,
/// `ChunkCommitmentChain(restoring:)`, `StreamingMerkleTree(restoring:)`) and appending a chunk after;
/// an accepted checkpoint re-encodes to JSON that decodes to the same value; a resumed structure reports
/// the checkpoint it was restored from.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    let selector = cursor.u8() % 3
    let data = Data(cursor.rest)
    let chunk = Digest32.zero
    switch selector {
    case 0:
        guard let checkpoint = roundTrip(IntegrityCheckpoint.self, data) else { return }
        guard let ledger = try? ChunkIntegrityLedger(restoring: checkpoint) else { return }
        FuzzCheck.require(ledger.checkpoint() == checkpoint, "a restored ledger reports another checkpoint")
        _ = ledger.merkleRoot
        _ = try? ledger.append(chunkHash: chunk)
    case 1:
        guard let checkpoint = roundTrip(ChainCheckpoint.self, data) else { return }
        var chain = ChunkCommitmentChain(restoring: checkpoint)
        FuzzCheck.require(chain.checkpoint == checkpoint, "a restored chain reports another checkpoint")
        chain.append(chunk)
        FuzzCheck.require(chain.count == checkpoint.count + 1, "an append after a restore lost count")
    default:
        guard let checkpoint = roundTrip(MerkleCheckpoint.self, data) else { return }
        var tree = StreamingMerkleTree(restoring: checkpoint)
        FuzzCheck.require(tree.checkpoint == checkpoint, "a restored tree reports another checkpoint")
        _ = tree.root
        _ = try? tree.append(chunk)
        _ = tree.root
    }
}

private func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ data: Data) -> T? {
    guard let value = try? JSONDecoder().decode(type, from: data) else { return nil }
    guard let json = try? JSONEncoder().encode(value) else { FuzzCheck.fail("an accepted \(type) does not encode") }
    FuzzCheck.require((try? JSONDecoder().decode(type, from: json)) == value, "\(type) does not round-trip")
    FuzzCheck.accepted("\(type)")
    return value
}
