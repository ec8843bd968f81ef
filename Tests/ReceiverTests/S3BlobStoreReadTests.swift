import AetherIO
import AetherTransport
import Foundation
import Testing

@testable import AetherReceiver

/// How the fleet's `S3BlobStore` reads a stream without listing its pieces for every read, and how it stays right
/// when another receiver changes them: two stores on one bucket prefix (on moto) stand for two receivers.
@Suite struct S3BlobStoreReadTests {
    let id = BlobStoreConformanceTests.newID()

    /// Another store (receiver) on the same bucket and prefix.
    static func twin(of store: S3BlobStore) -> S3BlobStore {
        S3BlobStore(client: store.client, prefix: store.prefix, options: store.options)
    }

    static func place(_ store: S3BlobStore, _ id: UploadID, at offset: Int64, _ bytes: [UInt8]) throws {
        let writer = try store.place(into: .stream(id), at: offset)
        try unsafe bytes.withUnsafeBytes { try unsafe writer.write($0) }
        try writer.commit()
    }

    @Test func aPieceAnotherReceiverDeletedIsFoundGoneAndTheStreamIsListedAgain() async throws {
        let first = try await MotoTestServer.shared.get().store()
        let second = Self.twin(of: first)
        let id = self.id
        let old = EngineFixture.bytes(70_000, seed: 1)
        let new = EngineFixture.bytes(70_000, seed: 2)
        try await MotoTestServer.onThread {
            try Self.place(first, id, at: 0, old)
            // Served from the piece the first store committed itself.
            #expect(try BlobStoreConformanceTests.read(first, .stream(id), at: 0, count: old.count) == old)
            // The other receiver removes the stream and writes the region anew.
            try second.delete(.stream(id))
            try Self.place(second, id, at: 0, new)
            #expect(
                try BlobStoreConformanceTests.read(first, .stream(id), at: 100, count: 5_000) == Array(new[100..<5_100])
            )
        }
    }

    @Test func aRangeTheSeenPiecesDoNotCoverIsListedAndReadAcrossBothReceiversPieces() async throws {
        let first = try await MotoTestServer.shared.get().store()
        let second = Self.twin(of: first)
        let id = self.id
        let front = EngineFixture.bytes(40_000, seed: 3)
        let back = EngineFixture.bytes(30_000, seed: 4)
        try await MotoTestServer.onThread {
            try Self.place(first, id, at: 0, front)
            #expect(try BlobStoreConformanceTests.read(first, .stream(id), at: 0, count: 10) == Array(front[0..<10]))
            try Self.place(second, id, at: 40_000, back)
            #expect(try BlobStoreConformanceTests.read(first, .stream(id), at: 0, count: 70_000) == front + back)
            #expect(
                try BlobStoreConformanceTests.read(second, .stream(id), at: 39_990, count: 20)
                    == Array((front + back)[39_990..<40_010]))
        }
    }

    /// The parts a completion makes of the pieces: buffered runs flushed at the 5 MiB minimum, a piece met with
    /// nothing buffered and 5 MiB or more left copied server side (whole, or the rest of it), the tail buffered.
    @Test func aCompletionCopiesLargePiecesAndBuffersSmallOnesIntoPartsOfTheMinimum() {
        let mib: Int64 = 1 << 20
        func segment(_ start: Int64, _ length: Int64) -> S3BlobPiece.Segment {
            let piece = S3BlobPiece(own: "p/\(start)", start: start * mib, length: length * mib, kind: .region)
            return S3BlobPiece.Segment(start: start * mib, end: (start + length) * mib, piece: piece)
        }
        func shapes(_ plan: [S3BlobStore.PlannedPart]) -> [String] {
            plan.map { part in
                switch part {
                case .copy(let key, let range):
                    "copy \(key) " + (range.map { "\($0.lowerBound / mib)-\($0.upperBound / mib)" } ?? "whole")
                case .buffered(let fetches):
                    "buffer " + fetches.map { "\($0.key)+\(Int64($0.range.count) / mib)" }.joined(separator: ",")
                }
            }
        }
        let whole = S3BlobStore.plan(
            [segment(0, 6), segment(6, 1), segment(7, 1)], minimum: 5 * mib, partTarget: 8 * mib)
        #expect(shapes(whole) == ["copy p/0 whole", "buffer p/6+1,p/7+1"])
        let mixed = S3BlobStore.plan(
            [segment(0, 1), segment(1, 10), segment(11, 1), segment(12, 1), segment(13, 6)], minimum: 5 * mib,
            partTarget: 8 * mib)
        #expect(
            shapes(mixed) == [
                "buffer p/0+1,p/1+4", "copy p/1 4-10", "buffer p/11+1,p/12+1,p/13+3", "buffer p/13+3",
            ])
    }
}
