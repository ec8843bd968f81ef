@_spi(Testing) import AetherIO
import Foundation
import Testing

@_spi(Testing) @testable import AetherSecurity

/// The host's tombstone list on disk: fails closed on every damage, never overwrites a damaged file, writes
/// atomically (a failed write leaves the previous list), and converts the old text form on its next write.
@Suite struct TombstoneFileTests {
    /// A fresh directory (mode 0700, like the host's state directory) and the list's path in it.
    struct Scratch: ~Copyable {
        let root: URL
        var path: String { root.appendingPathComponent("tombstones").path }
        var file: TombstoneFile { TombstoneFile(path: path) }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("aether-tomb-\(UUID().uuidString)")
            try FileManager.default.createDirectory(
                at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        func put(_ bytes: [UInt8], mode: Int = 0o600) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        }

        func bytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

        func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() }
    }

    let retired = KeyID()

    @Test func noFileMeansNoRetiredKeyAndARecordCreatesAVersion1ListOfMode0600() throws {
        let scratch = try Scratch()
        #expect(try scratch.file.load() == TombstoneList())
        #expect(try scratch.file.record(retired, retiredAt: 77))
        #expect(try !scratch.file.record(retired, retiredAt: 99))
        #expect(try scratch.file.inspect() == .intact(try TombstoneList(entries: [retired: 77]), .version1))
        let mode = try FileManager.default.attributesOfItem(atPath: scratch.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try scratch.names() == ["tombstones"])
    }

    enum Damage: String, CaseIterable, Sendable {
        case crlf, upperCase, truncatedLine, directory, symbolicLink, wrongMode, badChecksum, fifo
    }

    private func make(_ damage: Damage, in scratch: borrowing Scratch) throws {
        let line = "\(retired.hex) 1700000000000"
        switch damage {
        case .crlf: try scratch.put(Array((line + "\r\n").utf8))
        case .upperCase: try scratch.put(Array((line.uppercased() + "\n").utf8))
        case .truncatedLine: try scratch.put(Array(line.prefix(40).utf8))
        case .directory:
            try FileManager.default.createDirectory(atPath: scratch.path, withIntermediateDirectories: false)
        case .symbolicLink:
            let target = scratch.root.appendingPathComponent("elsewhere").path
            try Data(Array((line + "\n").utf8)).write(to: URL(fileURLWithPath: target))
            try FileManager.default.createSymbolicLink(atPath: scratch.path, withDestinationPath: target)
        case .wrongMode: try scratch.put(Array((line + "\n").utf8), mode: 0o644)
        case .badChecksum:
            var bytes = TombstoneFormat.encode(try TombstoneList(entries: [retired: 5]))
            bytes[bytes.count - 1] ^= 0x80
            try scratch.put(bytes)
        case .fifo:
            let made = unsafe mkfifo(scratch.path, 0o600)
            #expect(made == 0)
        }
    }

    @Test(arguments: Damage.allCases)
    func aDamagedListFailsClosedNamingTheFileAndIsNeverOverwritten(_ damage: Damage) throws {
        let scratch = try Scratch()
        try make(damage, in: scratch)
        let before = try FileManager.default.attributesOfItem(atPath: scratch.path)
        let beforeBytes = damage == .directory || damage == .fifo ? [] : try scratch.bytes()

        let loadError = #expect(throws: SecurityError.self) { _ = try scratch.file.load() }
        #expect(loadError?.code == .keyStoreDamaged)
        #expect(loadError?.message.contains(scratch.path) == true)
        let recordError = #expect(throws: SecurityError.self) { try scratch.file.record(KeyID(), retiredAt: 1) }
        #expect(recordError?.code == .keyStoreDamaged)

        let after = try FileManager.default.attributesOfItem(atPath: scratch.path)
        #expect(after[.systemFileNumber] as? Int == before[.systemFileNumber] as? Int)
        #expect(after[.posixPermissions] as? Int == before[.posixPermissions] as? Int)
        if damage != .directory && damage != .fifo { #expect(try scratch.bytes() == beforeBytes) }
        #expect(try scratch.names().allSatisfy { !$0.hasSuffix(".tmp") })
    }

    @Test func anOldTextListIsReadAndItsNextRecordRewritesItInVersion1() throws {
        let scratch = try Scratch()
        let old = KeyID()
        try scratch.put(Array("\(old.hex) 1700000000000\n".utf8))
        #expect(
            try scratch.file.inspect() == .intact(try TombstoneList(entries: [old: 1_700_000_000_000]), .legacyText))
        // Recording a key already in it still converts the file.
        #expect(try scratch.file.record(old, retiredAt: 1_800_000_000_000))
        #expect(try scratch.file.inspect() == .intact(try TombstoneList(entries: [old: 1_700_000_000_000]), .version1))
        #expect(try scratch.file.record(retired, retiredAt: 3))
        #expect(try scratch.file.load().keyIDs == [old, retired].sorted())
    }

    @Test(arguments: [AtomicFile.Fault.write, .fileSync, .rename])
    func aFailedWriteLeavesThePreviousListWhole(_ fault: AtomicFile.Fault) throws {
        let scratch = try Scratch()
        try scratch.file.record(retired, retiredAt: 1)
        let before = try scratch.bytes()
        var failing = scratch.file
        failing.writeFault = fault
        let error = #expect(throws: SecurityError.self) { try failing.record(KeyID(), retiredAt: 2) }
        #expect(error?.code == .systemCall)
        #expect(error?.message.contains(scratch.path) == true)
        #expect(try scratch.bytes() == before)
        #expect(try scratch.names() == ["tombstones"])
    }
}
