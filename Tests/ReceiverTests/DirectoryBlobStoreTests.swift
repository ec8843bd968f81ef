import AetherIO
import AetherReceiver
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `DirectoryBlobStore.forEachPiece` (mapped, no buffer copy) and the object assembly that completion runs over it.
@Suite struct DirectoryBlobStoreTests {
    let root: FilePath
    let store: DirectoryBlobStore
    let id: UploadID

    init() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aether-blobs-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        root = FilePath(path)
        store = try DirectoryBlobStore(root: root)
        id = try UploadID("irue7o6w6nugp2nvvhvoqd2txu")
    }

    func put(_ bytes: [UInt8], as key: BlobKey) throws {
        let writer = try store.stage(key)
        try writer.write(bytes)
        try writer.commit()
    }

    func pieces(of key: BlobKey, size: Int) throws -> [[UInt8]] {
        var seen: [[UInt8]] = []
        try unsafe store.forEachPiece(of: key, pieceSize: size) { piece in unsafe seen.append(Array(piece)) }
        return seen
    }

    @Test(arguments: [1, 4096, 65_537, 300_000, 1 << 20])
    func piecesCoverTheBlobInOrderAndNoneIsLongerThanAsked(pieceSize: Int) throws {
        defer { try? FileManager.default.removeItem(atPath: root.description) }
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        try put(bytes, as: .chunk(id, index: 3))
        let seen = try pieces(of: .chunk(id, index: 3), size: pieceSize == 1 ? 7 : pieceSize)
        #expect(Array(seen.joined()) == bytes)
        let limit = pieceSize == 1 ? 7 : pieceSize
        #expect(seen.dropLast().allSatisfy { $0.count == limit })
        #expect(seen.last.map { $0.count <= limit && !$0.isEmpty } == true)
    }

    @Test func aFileOrFIFOWhereTheStoreOrOneOfItsDirectoriesBelongsIsNamedAndLeftAlone() throws {
        let file = root.appending("plain")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: file.description))
        let refused = receiverError { _ = try DirectoryBlobStore(root: file) }
        #expect(refused?.code == .storageFailed)
        #expect(refused?.message.contains("plain is a regular file, not a directory") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file.description)) == Data([1, 2, 3]))

        let partial = root.appending("partial")
        try FileManager.default.createDirectory(atPath: partial.description, withIntermediateDirectories: true)
        #expect(unsafe mkfifo(partial.appending("objects").description, 0o600) == 0)
        #expect(
            receiverError { _ = try DirectoryBlobStore(root: partial) }?.message.contains("objects is a FIFO") == true)
    }

    @Test func anEmptyBlobGivesNoPieceAndAMissingOneIsAStorageError() throws {
        defer { try? FileManager.default.removeItem(atPath: root.description) }
        try put([], as: .chunk(id, index: 0))
        #expect(try pieces(of: .chunk(id, index: 0), size: 4096).isEmpty)
        let error = #expect(throws: ReceiverError.self) { _ = try pieces(of: .chunk(id, index: 1), size: 4096) }
        #expect(error?.code == .storageFailed)
    }

    @Test func anErrorFromTheBodyStopsTheWalkAndIsRethrown() throws {
        defer { try? FileManager.default.removeItem(atPath: root.description) }
        try put([UInt8](repeating: 9, count: 10_000), as: .chunk(id, index: 0))
        var calls = 0
        let error = #expect(throws: ReceiverError.self) {
            try unsafe store.forEachPiece(of: .chunk(id, index: 0), pieceSize: 1000) { _ throws(ReceiverError) in
                calls += 1
                if calls == 3 { throw ReceiverError(.digestMismatch, "stop") }
            }
        }
        #expect(error?.code == .digestMismatch)
        #expect(calls == 3)
    }

    @Test func assemblyConcatenatesThePartsAndObservesEveryByteOnce() throws {
        defer { try? FileManager.default.removeItem(atPath: root.description) }
        let parts = (0..<4).map { index in (0..<(50_000 + index * 333)).map { UInt8(truncatingIfNeeded: $0 ^ index) } }
        for (index, part) in parts.enumerated() { try put(part, as: .chunk(id, index: index)) }
        try put([], as: .chunk(id, index: 4))
        var observed = SHA256()
        var count = 0
        let writer = try unsafe store.assemble(
            .object(id), from: (0..<5).map { .chunk(id, index: $0) }, bufferSize: 8192
        ) {
            piece in
            unsafe observed.update(piece)
            count += piece.count
        }
        try writer.commit()
        let whole = Array(parts.joined())
        #expect(count == whole.count)
        #expect(observed.finalize() == SHA256.hash(whole))
        let stored = try Data(contentsOf: URL(fileURLWithPath: store.path(of: .object(id)).description))
        #expect([UInt8](stored) == whole)
    }
}
