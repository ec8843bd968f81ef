import Foundation
import Testing

/// `aether demo` as `make demo` runs it (smaller file, faster cap): every step behaves as shown.
@Suite(.serialized) struct DemoLiveTests {
    @Test func theDemoUploadsIsInterruptedResumesVerifiesAndShowsTheEarlierSteps() throws {
        let (status, child) = try UploadChild.run(["demo", "--size", "32M", "--max-rate", "32M"])
        #expect(status == 0, "\(child.stderr)")
        let out = child.stdout
        for step in 1...7 { #expect(out.contains("\n== \(step). "), "step \(step) missing:\n\(out)") }
        // The first run was paused by the interruption, the second resumed from the receiver's chunks.
        #expect(child.stderr.contains("paused; resume with: aether resume"), "\(child.stderr)")
        #expect(out.contains("resuming at level"), "\(out)")
        #expect(out.contains("intact: 8 chunks"), "\(out)")
        #expect(out.contains("second sealed record"))
        #expect(out.contains("== done: "))
    }

    @Test func aWorkDirectoryThatExistsIsRefusedAndLeftAlone() throws {
        let directory = try SessionLive.temporaryDirectory()
        try Data("kept".utf8).write(to: URL(fileURLWithPath: directory + "/note"))
        let (status, child) = try UploadChild.run(["demo", "--work-dir", directory])
        #expect(status != 0)
        #expect(child.stderr.contains("exists") || child.stderr.contains("File exists"), "\(child.stderr)")
        #expect(try String(contentsOfFile: directory + "/note", encoding: .utf8) == "kept")
    }
}
