import AetherIO
import AetherSecurity
import Foundation
import Synchronization
import Testing

@testable import AetherReceiver

/// A directory store that counts its reads (every read of an S3 store is a request) and the bytes they read.
final class CountingBlobStore: BlobStore {
    let inner: DirectoryBlobStore
    let reads = Mutex(0)
    let bytes = Mutex<Int64>(0)

    init() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aether-count-\(UUID().uuidString)")
        inner = try DirectoryBlobStore(root: FilePath(path.path))
    }

    init(root: FilePath) throws { inner = try DirectoryBlobStore(root: root) }

    /// Bytes read so far (every other way of reading, `forEachPiece` included, goes through `read`).
    var bytesRead: Int64 { bytes.withLock { $0 } }

    func stage(_ key: BlobKey) throws(ReceiverError) -> any BlobWriter { try inner.stage(key) }
    func append(to key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter {
        try inner.append(to: key, at: offset)
    }
    func place(into key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter {
        try inner.place(into: key, at: offset)
    }
    func reserve(_ key: BlobKey, size: Int64) throws(ReceiverError) { try inner.reserve(key, size: size) }
    func read(_ key: BlobKey, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(ReceiverError)
        -> Int
    {
        reads.withLock { $0 += 1 }
        let count = try unsafe inner.read(key, at: offset, into: buffer)
        bytes.withLock { $0 += Int64(count) }
        return count
    }
    func size(of key: BlobKey) throws(ReceiverError) -> Int64? { try inner.size(of: key) }
    func promote(_ from: BlobKey, to: BlobKey) throws(ReceiverError) { try inner.promote(from, to: to) }
    func alias(_ existing: BlobKey, as alias: BlobKey) throws(ReceiverError) { try inner.alias(existing, as: alias) }
    func delete(_ key: BlobKey) throws(ReceiverError) { try inner.delete(key) }
    func deleteWorkingBlobs(of upload: UploadID) throws(ReceiverError) { try inner.deleteWorkingBlobs(of: upload) }
    func keys() throws(ReceiverError) -> [BlobKey] { try inner.keys() }
    func discardStaging() throws(ReceiverError) -> Int { try inner.discardStaging() }
}

@Suite struct BlobPossessionSourceTests {
    /// A 16 MiB sampled chunk read in the verifier's 1 MiB steps costs 3 store reads (1 MiB, then 8 MiB ahead
    /// twice), not 16; a jump to another place reads only what was asked; every byte matches the object.
    @Test func sequentialReadsFetchAheadAndJumpsReadOnlyWhatIsAsked() throws {
        let store = try CountingBlobStore()
        let content = EngineFixture.bytes(20 << 20, seed: 12)
        let id = UploadID(randomBytes: Array(repeating: 7, count: 16))
        let writer = try store.stage(.object(id))
        try writer.write(content)
        try writer.commit()
        let source = BlobPossessionSource(blobs: store, key: .object(id), size: UInt64(content.count))
        var offset = 2 << 20
        while offset < 18 << 20 {
            #expect(
                try source.read(offset: UInt64(offset), count: 1 << 20) == Array(content[offset..<offset + (1 << 20)]))
            offset += 1 << 20
        }
        #expect(store.reads.withLock { $0 } == 3)
        #expect(try source.read(offset: 100, count: 4096) == Array(content[100..<4196]))
        #expect(store.reads.withLock { $0 } == 4)
        // The tail: the read ahead stops at the end of the object.
        #expect(try source.read(offset: UInt64(content.count - 10), count: 10) == Array(content.suffix(10)))
        #expect(throws: SecurityError.self) { try source.read(offset: UInt64(content.count - 10), count: 11) }
    }
}
