import AetherIO
import Foundation
import Synchronization
import Testing

@testable import AetherUploader

/// One process (one holder) at a time per upload key.
@Suite struct UploadLockTests {
    @Test func aSecondHolderOfTheSameKeyIsRefusedUntilTheFirstLetsGo() throws {
        let scratch = StateScratch()
        let directory = try UploadStateDirectory.resolve(override: FilePath(scratch.path("state")))
        var first: UploadLock? = try UploadLock(directory: directory, key: "1a3f2b32")
        let asked = ContinuousClock.now
        let error = #expect(throws: UploaderError.self) {
            try UploadLock(directory: directory, key: "1a3f2b32", waitingUpTo: 0.3)
        }
        #expect(error?.code == .alreadyRunning)
        // Refused only after waiting for the holder to let go.
        #expect(asked.duration(to: .now) >= .milliseconds(300))
        // Another upload is not held up.
        _ = try UploadLock(directory: directory, key: "other")
        #expect(first != nil)
        first = nil
        _ = try UploadLock(directory: directory, key: "1a3f2b32")
        #expect(scratch.mode(scratch.path("state/locks")) == 0o700)
    }

    /// A holder that lets go while the next one waits (a process killed a moment ago, whose descriptors the kernel
    /// releases after it is reaped) hands the lock over instead of a refusal.
    @Test func aLockReleasedWhileTheNextWaitsIsTaken() throws {
        let scratch = StateScratch()
        let directory = try UploadStateDirectory.resolve(override: FilePath(scratch.path("state")))
        let first = Mutex<UploadLock?>(try UploadLock(directory: directory, key: "5d0c"))
        let releaser = Thread {
            usleep(150_000)
            first.withLock { $0 = nil }
        }
        releaser.start()
        let asked = ContinuousClock.now
        _ = try UploadLock(directory: directory, key: "5d0c", waitingUpTo: 10)
        let waited = asked.duration(to: .now)
        #expect(waited >= .milliseconds(100) && waited < .seconds(10))
        #expect(first.withLock { $0 == nil })
    }

    /// `locks/` is judged as `telemetry/` and `snapshots/` are: a link put in its place (to a directory another
    /// user can read, say) is refused, and nothing is created where it points.
    @Test func aSymbolicLinkInPlaceOfTheLocksDirectoryIsRefusedAndNothingIsCreatedWhereItPoints() throws {
        let scratch = StateScratch()
        let directory = try UploadStateDirectory.resolve(override: FilePath(scratch.path("state")))
        let elsewhere = scratch.path("elsewhere")
        #expect(scratch.makeDirectory(elsewhere, mode: 0o700))
        try FileManager.default.createSymbolicLink(atPath: scratch.path("state/locks"), withDestinationPath: elsewhere)
        let error = #expect(throws: UploaderError.self) { try UploadLock(directory: directory, key: "9e1d") }
        #expect(error?.code == .stateDirectoryRefused)
        #expect(error?.message.contains("locks") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        // A lock file that is a link is refused too (O_NOFOLLOW inside the judged directory).
        try FileManager.default.removeItem(atPath: scratch.path("state/locks"))
        _ = try UploadLock(directory: directory, key: "first")
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("state/locks/9e1d.lock"), withDestinationPath: elsewhere + "/target")
        let linked = #expect(throws: UploaderError.self) { try UploadLock(directory: directory, key: "9e1d") }
        #expect(linked?.code == .systemCall)
        #expect(!FileManager.default.fileExists(atPath: elsewhere + "/target"))
    }

    @Test(arguments: ["", "../escape", "a/b", "with space", String(repeating: "k", count: 257)])
    func aKeyThatIsNotAnIdIsRefused(key: String) throws {
        let scratch = StateScratch()
        let directory = try UploadStateDirectory.resolve(override: FilePath(scratch.path("state")))
        let error = #expect(throws: UploaderError.self) { try UploadLock(directory: directory, key: key) }
        #expect(error?.code == .invalidArgument)
    }
}
