import AetherIO
import AetherSecurity
import Foundation
import Glibc
import Testing

@testable import AetherUploader

@Suite struct SnapshotVaultTests {
    static let key = "file:/data/scan.bin -> https://example.test/uploads"
    static let snapshot: [UInt8] = Array("{\"acked\":[0,1,2],\"offset\":3145728}".utf8)

    @Test func aStoredSnapshotLoadsBackAndIsEncrypted() throws {
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        #expect(try vault.load(key: Self.key) == .absent)
        try vault.store(Self.snapshot, for: Self.key)
        #expect(try vault.load(key: Self.key) == .snapshot(Self.snapshot))

        let file = vault.path(for: Self.key)
        #expect(file.hasSuffix("/snapshots/" + SHA256.hash(Array(Self.key.utf8)).hex + ".snapshot"))
        #expect(scratch.mode(file) == 0o600)
        #expect(scratch.mode(scratch.path("state/snapshots")) == 0o700)
        let stored = try scratch.bytes(file)
        // Header: magic, version 1, key length, key; then nonce, ciphertext and tag.
        let keyBytes = Array(Self.key.utf8)
        #expect(Array(stored[0..<5]) == Array("ASNP".utf8) + [1])
        #expect(Int(stored[5]) << 8 | Int(stored[6]) == keyBytes.count)
        #expect(Array(stored[7..<(7 + keyBytes.count)]) == keyBytes)
        #expect(stored.count == 7 + keyBytes.count + 12 + Self.snapshot.count + 16)
        // The snapshot text is nowhere in the file.
        #expect(!Data(stored).contains(Data(Self.snapshot.prefix(12))))

        // A new write replaces the old one whole, with a fresh nonce.
        try vault.store([9, 9], for: Self.key)
        #expect(try vault.load(key: Self.key) == .snapshot([9, 9]))
        let again = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        #expect(try again.load(key: Self.key) == .snapshot([9, 9]))
    }

    @Test func anEmptySnapshotAndTheLargestAllowedRoundTrip() throws {
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory(), maximumSnapshotByteCount: 1000)
        try vault.store([], for: "empty")
        #expect(try vault.load(key: "empty") == .snapshot([]))
        let largest = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
        try vault.store(largest, for: "largest")
        #expect(try vault.load(key: "largest") == .snapshot(largest))
        let error = #expect(throws: UploaderError.self) { try vault.store(largest + [0], for: "largest") }
        #expect(error?.code == .invalidArgument)
        #expect(throws: UploaderError.self) { try vault.store([1], for: "") }
        #expect(throws: UploaderError.self) { try vault.load(key: String(repeating: "k", count: 257)) }
    }

    @Test func anotherMasterKeyOpensNothing() throws {
        let scratch = StateScratch()
        let directory = try scratch.stateDirectory()
        try SnapshotVault(stateDirectory: directory).store(Self.snapshot, for: Self.key)
        let wrong = try SnapshotVault(stateDirectory: directory, masterKey: SymmetricKey(size: .bits256))
        guard case .damaged(let damage) = try wrong.load(key: Self.key) else {
            Issue.record("a snapshot opened under another master key")
            return
        }
        #expect(damage.reason == .authenticationFailed)
        #expect(damage.path == wrong.path(for: Self.key))
        #expect(damage.error.code == .snapshotDamaged)
        #expect(damage.error.message.contains(damage.path))
    }

    @Test func aByteFlippedAnywhereIsDamageAndTheFileIsLeftAsItIs() throws {
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        try vault.store(Self.snapshot, for: Self.key)
        let file = vault.path(for: Self.key)
        let original = try scratch.bytes(file)
        for index in original.indices {
            for mask: UInt8 in [0x01, 0x80] {
                var flipped = original
                flipped[index] ^= mask
                try scratch.overwrite(file, with: flipped)
                let fresh = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
                guard case .damaged(let damage) = try fresh.load(key: Self.key) else {
                    Issue.record("byte \(index) ^ \(mask) was not caught")
                    continue
                }
                #expect(damage.path == file)
                // The caller decides: a store does not silently replace the damaged file.
                let error = #expect(throws: UploaderError.self) { try fresh.store([1], for: Self.key) }
                #expect(error?.code == .snapshotDamaged)
                #expect(try scratch.bytes(file) == flipped)
            }
        }
        // The reasons are specific where the framing tells.
        var badMagic = original
        badMagic[0] ^= 1
        try scratch.overwrite(file, with: badMagic)
        #expect(try vault.load(key: Self.key) == .damaged(SnapshotDamage(reason: .notASnapshot, path: file)))
        var badVersion = original
        badVersion[4] = 2
        try scratch.overwrite(file, with: badVersion)
        #expect(try vault.load(key: Self.key) == .damaged(SnapshotDamage(reason: .unsupportedVersion, path: file)))
    }

    @Test func everyTruncationIsDamage() throws {
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        try vault.store(Self.snapshot, for: Self.key)
        let file = vault.path(for: Self.key)
        let original = try scratch.bytes(file)
        for length in 0..<original.count {
            try scratch.overwrite(file, with: Array(original.prefix(length)))
            guard case .damaged = try vault.load(key: Self.key) else {
                Issue.record("a file cut to \(length) bytes was not caught")
                continue
            }
        }
        try scratch.overwrite(file, with: original + [0])
        guard case .damaged(let damage) = try vault.load(key: Self.key) else {
            Issue.record("a trailing byte was not caught")
            return
        }
        #expect(damage.reason == .authenticationFailed)
    }

    @Test func aSnapshotCopiedUnderAnotherKeysNameIsRefused() throws {
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        try vault.store(Self.snapshot, for: "a")
        try vault.store([1], for: "b")
        try scratch.overwrite(vault.path(for: "b"), with: try scratch.bytes(vault.path(for: "a")))
        #expect(try vault.load(key: "b") == .damaged(SnapshotDamage(reason: .wrongKey, path: vault.path(for: "b"))))
        let listing = try vault.list()
        #expect(listing.keys == ["a"])
        #expect(listing.damaged == [SnapshotDamage(reason: .wrongKey, path: vault.path(for: "b"))])
    }

    @Test func aFIFOOrDirectoryWhereTheFileBelongsIsDamageAndNeverBlocks() throws {
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        let fifoFile = vault.path(for: "fifo")
        #expect(scratch.makeFIFO(fifoFile))
        let directoryFile = vault.path(for: "dir")
        #expect(scratch.makeDirectory(directoryFile, mode: 0o700))
        for key in ["fifo", "dir"] {
            #expect(
                try vault.load(key: key)
                    == .damaged(SnapshotDamage(reason: .notARegularFile, path: vault.path(for: key))))
            for replacing in [false, true] {
                let error = #expect(throws: UploaderError.self) {
                    try vault.store([1], for: key, replacingDamaged: replacing)
                }
                #expect(error?.code == .snapshotDamaged)
            }
        }
        #expect(scratch.kind(fifoFile) == UInt32(S_IFIFO))
        #expect(scratch.kind(directoryFile) == UInt32(S_IFDIR))
        #expect(try vault.list().damaged.count == 2)
    }

    @Test func theCallerMayReplaceOrRemoveADamagedSnapshot() throws {
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        try vault.store(Self.snapshot, for: Self.key)
        let file = vault.path(for: Self.key)
        try scratch.overwrite(file, with: [0x41, 0x53])
        let fresh = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        try fresh.store([7], for: Self.key, replacingDamaged: true)
        #expect(try fresh.load(key: Self.key) == .snapshot([7]))
        #expect(try fresh.remove(key: Self.key))
        #expect(try fresh.load(key: Self.key) == .absent)
        #expect(try fresh.remove(key: Self.key) == false)
    }

    @Test func aLooseModeIsDamage() throws {
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        try vault.store(Self.snapshot, for: Self.key)
        scratch.setMode(vault.path(for: Self.key), 0o644)
        #expect(
            try vault.load(key: Self.key)
                == .damaged(SnapshotDamage(reason: .wrongMode, path: vault.path(for: Self.key))))
    }

    @Test func listingNamesEveryKeyAndIgnoresOtherFiles() throws {
        let scratch = StateScratch()
        let vault = try SnapshotVault(stateDirectory: try scratch.stateDirectory())
        let keys = ["zeta", "alpha", "upload \u{1F600} ü", String(repeating: "x", count: 256)]
        for key in keys { try vault.store(Array(key.utf8), for: key) }
        try scratch.overwrite(scratch.path("state/snapshots/notes.txt"), with: [1])
        #expect(try vault.list() == SnapshotVault.Listing(keys: keys.sorted(), damaged: []))
        for key in keys { #expect(try vault.load(key: key) == .snapshot(Array(key.utf8))) }
    }
}
