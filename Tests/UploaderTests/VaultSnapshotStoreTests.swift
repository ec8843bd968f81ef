import AetherIO
import AetherTransport
import FoundationEssentials
import Testing

@testable import AetherUploader

@Suite struct VaultSnapshotStoreTests {
    @Test func aSavedSnapshotRoundTripsAndADamagedOneIsReported() throws {
        let fixture = try UploadFixture(bytes: [1, 2, 3])
        defer { fixture.clean() }
        let store = try fixture.store()
        let snapshot = ResumeSnapshot(
            filePath: Array(fixture.file.utf8), destination: "memory://dest", mode: .native, endpoint: nil,
            fingerprint: .init(try FileFingerprint(path: fixture.file)),
            remote: RemoteUpload(location: "memory://upload/1", uploadID: nil, size: 3, partSize: 1),
            partSize: 1, partCount: 3, chainSessionID: "abc",
            acknowledged: [1: .init(receipt: PartReceipt(index: 1, length: 1), sha256: SHA256.hash([2]).hex)],
            createdAt: 1)
        try store.save(try snapshot.serialized(), key: "k1")
        let loaded = try ResumeSnapshot.deserialize(try #require(try store.load(key: "k1")))
        #expect(loaded == snapshot)
        #expect(try store.keys() == ["k1"])
        try AtomicFile.write([UInt8](repeating: 0, count: 80), to: store.vault.path(for: "k1"), options: .secret)
        #expect { try store.load(key: "k1") } throws: { ($0 as? UploaderError)?.code == .snapshotDamaged }
        try store.remove(key: "k1")
        #expect(try store.load(key: "k1") == nil)
    }

    @Test func aSnapshotWithAnOutOfRangePartDoesNotDecode() throws {
        let text = """
            {"acknowledged":[{"receipt":{"index":9,"length":1},"sha256":"\(SHA256.hash([1]).hex)"}],\
            "chain_session_id":"a","created_at":1,"destination":"d","file_path":[97],"fingerprint":\
            {"device":1,"headSHA256":"00","inode":1,"modificationNanoseconds":1,"size":3},"part_count":3,\
            "part_size":1,"protocol":"native","remote":{"location":"x","partSize":1,"size":3},"version":1}
            """
        #expect { try ResumeSnapshot.deserialize(Array(text.utf8)) } throws: {
            ($0 as? UploaderError)?.code == .snapshotDamaged
        }
    }

    @Test func theKeyDependsOnPathAndDestination() {
        let a = SnapshotKey.derive(canonicalPath: "/a/file", destination: "s3://b/k")
        #expect(a.count == 32)
        #expect(a == SnapshotKey.derive(canonicalPath: "/a/file", destination: "s3://b/k"))
        #expect(a != SnapshotKey.derive(canonicalPath: "/a/file2", destination: "s3://b/k"))
        #expect(a != SnapshotKey.derive(canonicalPath: "/a/file", destination: "s3://b/k2"))
    }
}
