import AetherIO
import AetherSecurity
import Foundation
import Testing

@testable import AetherUploader

@Suite struct UploadStateDirectoryTests {
    @Test func theDefaultFollowsXDGStateHomeThenHome() throws {
        let xdg = try UploadStateDirectory.defaultPath { ["XDG_STATE_HOME": "/x/state", "HOME": "/home/u"][$0] }
        #expect(xdg.description == "/x/state/aether")
        let relative = try UploadStateDirectory.defaultPath { ["XDG_STATE_HOME": "rel", "HOME": "/home/u"][$0] }
        #expect(relative.description == "/home/u/.local/state/aether")
        let home = try UploadStateDirectory.defaultPath { ["HOME": "/home/u"][$0] }
        #expect(home.description == "/home/u/.local/state/aether")
        #expect(throws: UploaderError.self) { try UploadStateDirectory.defaultPath { _ in nil } }
    }

    @Test func aMissingDirectoryIsCreatedWithMode0700() throws {
        let scratch = StateScratch()
        let directory = try UploadStateDirectory(path: FilePath(scratch.path("a/b/aether")))
        #expect(scratch.mode(directory.path.description) == 0o700)
        #expect(scratch.mode(scratch.path("a")) == 0o700)
        // A second open of the same directory is fine.
        _ = try UploadStateDirectory(path: directory.path)
    }

    @Test func aRegularFileFIFOOrLinkIsRefusedAndLeftAsItIs() throws {
        let scratch = StateScratch()
        let file = scratch.path("file")
        try scratch.overwrite(file, with: [1, 2, 3])
        let fifo = scratch.path("fifo")
        #expect(scratch.makeFIFO(fifo))
        let target = scratch.path("real")
        #expect(scratch.makeDirectory(target, mode: 0o700))
        let link = scratch.path("link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        for path in [file, fifo, link] {
            let error = #expect(throws: UploaderError.self) { try UploadStateDirectory(path: FilePath(path)) }
            #expect(error?.code == .stateDirectoryRefused)
        }
        #expect(try scratch.bytes(file) == [1, 2, 3])
    }

    @Test func aDirectoryOfAnotherUserIsRefused() throws {
        let scratch = StateScratch()
        let other = scratch.path("other")
        #expect(scratch.makeDirectory(other, mode: 0o700))
        // The tests run as root here; as another user chown is refused and the check cannot be staged.
        guard scratch.setOwner(other, 65534) else { return }
        let error = #expect(throws: UploaderError.self) { try UploadStateDirectory(path: FilePath(other)) }
        #expect(error?.code == .stateDirectoryRefused)
        #expect(error?.message.contains("another user") == true)
    }

    @Test func aDirectoryOpenToOthersIsRefusedNotChanged() throws {
        let scratch = StateScratch()
        let open = scratch.path("open")
        #expect(scratch.makeDirectory(open, mode: 0o755))
        let error = #expect(throws: UploaderError.self) { try UploadStateDirectory(path: FilePath(open)) }
        #expect(error?.code == .stateDirectoryRefused)
        #expect(scratch.mode(open) == 0o755)
    }

    @Test func theMasterKeyIsCreatedOnceWithMode0600() throws {
        let scratch = StateScratch()
        let directory = try scratch.stateDirectory()
        let first = try directory.masterKey()
        let keyPath = scratch.path("state/resume.key")
        #expect(scratch.mode(keyPath) == 0o600)
        #expect(try scratch.bytes(keyPath).count == 32)
        #expect(try directory.masterKey() == first)
        // Only the key file is left (the temporary file that carried it is gone).
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("state")) == ["resume.key"])
    }

    @Test func concurrentFirstUsesAgreeOnOneMasterKey() async throws {
        let scratch = StateScratch()
        let directory = try scratch.stateDirectory()
        let keys = try await withThrowingTaskGroup(of: SymmetricKey.self) { group in
            for _ in 0..<8 { group.addTask { try directory.masterKey() } }
            var all: [SymmetricKey] = []
            for try await key in group { all.append(key) }
            return all
        }
        #expect(keys.count == 8)
        #expect(keys.allSatisfy { $0 == keys[0] })
        #expect(try scratch.bytes(scratch.path("state/resume.key")).count == 32)
    }

    @Test func aDamagedMasterKeyFileIsReportedNeverReplaced() throws {
        let scratch = StateScratch()
        let directory = try scratch.stateDirectory()
        let keyPath = scratch.path("state/resume.key")
        for (bytes, mode) in [([UInt8](repeating: 7, count: 31), 0o600), ([UInt8](repeating: 7, count: 32), 0o644)] {
            try scratch.overwrite(keyPath, with: bytes)
            scratch.setMode(keyPath, UInt32(mode))
            let error = #expect(throws: UploaderError.self) { try directory.masterKey() }
            #expect(error?.code == .masterKeyDamaged)
            #expect(error?.message.contains("resume.key") == true)
            #expect(try scratch.bytes(keyPath) == bytes)
        }
    }

    @Test func aFIFOOrDirectoryWhereTheMasterKeyBelongsIsDamageAndNeverBlocks() throws {
        for kind in ["fifo", "directory", "link"] {
            let scratch = StateScratch()
            let directory = try scratch.stateDirectory()
            let keyPath = scratch.path("state/resume.key")
            switch kind {
            case "fifo": #expect(scratch.makeFIFO(keyPath))
            case "directory": #expect(scratch.makeDirectory(keyPath, mode: 0o700))
            default: try FileManager.default.createSymbolicLink(atPath: keyPath, withDestinationPath: "/dev/null")
            }
            let error = #expect(throws: UploaderError.self) { try directory.masterKey() }
            #expect(error?.code == .masterKeyDamaged)
            #expect(scratch.kind(keyPath) != UInt32(0o100000))  // S_IFREG: nothing was written in its place
        }
    }
}
