import AetherIO
import Testing

@testable import AetherUploader

/// One process (one holder) at a time per upload key.
@Suite struct UploadLockTests {
    @Test func aSecondHolderOfTheSameKeyIsRefusedUntilTheFirstLetsGo() throws {
        let scratch = StateScratch()
        let directory = try UploadStateDirectory.resolve(override: FilePath(scratch.path("state")))
        var first: UploadLock? = try UploadLock(directory: directory, key: "1a3f2b32")
        let error = #expect(throws: UploaderError.self) { try UploadLock(directory: directory, key: "1a3f2b32") }
        #expect(error?.code == .alreadyRunning)
        // Another upload is not held up.
        _ = try UploadLock(directory: directory, key: "other")
        #expect(first != nil)
        first = nil
        _ = try UploadLock(directory: directory, key: "1a3f2b32")
        #expect(scratch.mode(scratch.path("state/locks")) == 0o700)
    }

    @Test(arguments: ["", "../escape", "a/b", "with space", String(repeating: "k", count: 257)])
    func aKeyThatIsNotAnIdIsRefused(key: String) throws {
        let scratch = StateScratch()
        let directory = try UploadStateDirectory.resolve(override: FilePath(scratch.path("state")))
        let error = #expect(throws: UploaderError.self) { try UploadLock(directory: directory, key: key) }
        #expect(error?.code == .invalidArgument)
    }
}
