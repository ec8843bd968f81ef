import AetherIO
import Foundation
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// The capture journal: durable lines, damaged ones skipped (the file goes again), never a wrong skip.
@Suite struct CaptureJournalTests {
    static func file(_ name: String, size: Int64 = 10, modified: Int64 = 1, changed: Int64 = 1) -> CaptureFile {
        CaptureFile(
            relativePath: Array(name.utf8), path: FilePath("/x/" + name), size: size,
            modificationNanoseconds: modified, changeNanoseconds: changed, inode: 7, device: 1)
    }

    static func outcome(_ location: String) -> UploadOutcome {
        UploadOutcome(
            receipt: UploadReceipt(location: location, size: 10), sha256: SHA256.hash([1]),
            merkleRoot: SHA256.hash([2]),
            chainHead: SHA256.hash([3]), serverVerified: [], partsSent: 1, bytesSent: 10, partCount: 1,
            resume: ResumeReport(level: .none, reusedParts: 0, reusedBytes: 0, reason: nil))
    }

    @Test func linesSurviveReopeningAndDamagedOrTornOnesAreSkipped() throws {
        let scratch = StateScratch()
        let state = try UploadStateDirectory(path: FilePath(scratch.path("state")))
        do {
            let journal = try CaptureJournal(state: state, key: "c1")
            for name in ["a", "b", "c"] {
                try journal.record(CaptureJournal.Entry(Self.file(name), outcome: Self.outcome("loc-" + name)))
            }
        }
        let path = scratch.path("state/captures/c1.journal")
        #expect(scratch.mode(path) == 0o600)
        let reopened = try CaptureJournal(state: state, key: "c1")
        #expect(reopened.finished(Self.file("b"))?.location == "loc-b")
        // A changed file (size or time) is not taken for the recorded one.
        #expect(reopened.finished(Self.file("b", size: 11)) == nil)
        #expect(reopened.finished(Self.file("b", modified: 2)) == nil)
        // Content rewritten with the modification time put back still changed the status change time.
        #expect(reopened.finished(Self.file("b", changed: 2)) == nil)
        // The file's own bytes: nothing readable in the clear.
        let raw = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(!String(decoding: raw, as: UTF8.self).contains("loc-"))
        // One changed byte in the second line, and a torn line at the end: those two are skipped.
        var lines: [[UInt8]] = Array(raw).split(separator: 0x0A).map { Array($0) }
        lines[1][5] = lines[1][5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        var damaged: [UInt8] = []
        for line in lines { damaged += line + [0x0A] }
        damaged += lines[2].prefix(20)
        try Data(damaged).write(to: URL(fileURLWithPath: path))
        let afterDamage = try CaptureJournal(state: state, key: "c1")
        #expect(afterDamage.finished(Self.file("a"))?.location == "loc-a")
        #expect(afterDamage.finished(Self.file("b")) == nil)
        #expect(afterDamage.finished(Self.file("c"))?.location == "loc-c")
        // A line appended after the torn one starts clean.
        try afterDamage.record(CaptureJournal.Entry(Self.file("d"), outcome: Self.outcome("loc-d")))
        let last = try CaptureJournal(state: state, key: "c1")
        #expect(last.finished(Self.file("d"))?.location == "loc-d")
        // Another capture's key opens none of these lines.
        let other = try CaptureJournal(state: state, key: "c2")
        #expect(other.done.isEmpty)
        try FileManager.default.copyItem(atPath: path, toPath: scratch.path("state/captures/c3.journal"))
        #expect(try CaptureJournal(state: state, key: "c3").done.isEmpty)
    }

    @Test func aFIFOInPlaceOfTheJournalIsRefusedNotWaitedOn() throws {
        let scratch = StateScratch()
        let state = try UploadStateDirectory(path: FilePath(scratch.path("state")))
        #expect(scratch.makeDirectory(scratch.path("state/captures"), mode: 0o700))
        #expect(unsafe mkfifo(scratch.path("state/captures/c9.journal"), 0o600) == 0)
        let error = #expect(throws: UploaderError.self) { try CaptureJournal(state: state, key: "c9") }
        #expect(error?.code == .stateDirectoryRefused)
    }
}
