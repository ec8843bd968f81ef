import AetherIO
import Glibc
import Testing

@testable import AetherReceiver

/// A failed storage call is answered 503 when it is transient (descriptors, memory) and 507 otherwise, naming
/// the path.
@Suite struct StorageErrorTests {
    @Test(arguments: [EMFILE, ENFILE, ENOMEM])
    func runningOutOfDescriptorsOrMemoryIsUnavailable(code: Int32) {
        let error = DirectoryBlobStore.storageError(IOError(.systemCall, "open failed", errno: code, path: "/s/c/1"))
        #expect(error.code == .unavailable)
        #expect(error.code.status == 503)
    }

    @Test(arguments: [ENOSPC, EDQUOT, EIO, ENOTDIR])
    func noSpaceAnIOErrorOrABadPathIsStorageFailedNamingThePath(code: Int32) {
        let error = DirectoryBlobStore.storageError(IOError(.systemCall, "write failed", errno: code, path: "/s/c/1"))
        #expect(error.code == .storageFailed)
        #expect(error.message == "storage failed: write failed (/s/c/1)")
    }
}
