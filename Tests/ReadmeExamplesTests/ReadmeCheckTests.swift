import Foundation
import Testing

/// `scripts/check-readme-examples.py` itself: it passes on the README as committed and fails, naming the block,
/// when a README example drifts from `Examples.swift`, imports something else, or an example is dropped.
@Suite struct ReadmeCheckTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var readme: String {
        get throws { try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8) }
    }

    /// Runs the checker on `readme` (the committed one when nil): exit status and standard error.
    static func check(_ readme: String? = nil) throws -> (status: Int32, errors: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aether-readme-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var arguments = ["python3", root.appendingPathComponent("scripts/check-readme-examples.py").path]
        if let readme {
            let file = directory.appendingPathComponent("README.md")
            try Data(readme.utf8).write(to: file)
            arguments += ["--readme", file.path]
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: errors, as: UTF8.self))
    }

    @Test func theCommittedReadmeMatchesTheCompiledExamples() throws {
        let (status, errors) = try Self.check()
        #expect(status == 0, "\(errors)")
    }

    @Test func anEditedExampleLineFailsTheCheck() throws {
        let readme = try Self.readme
        let edited = readme.replacingOccurrences(of: "parityShards: 2)", with: "parityShards: 3)")
        #expect(edited != readme)
        let (status, errors) = try Self.check(edited)
        #expect(status == 1)
        #expect(errors.contains("is not verbatim in Examples.swift"))
    }

    @Test func anImportTheExamplesDoNotHaveFailsTheCheck() throws {
        let readme = try Self.readme
        let edited = readme.replacingOccurrences(of: "import AetherCoding\n", with: "import AetherCodingX\n")
        #expect(edited != readme)
        let (status, errors) = try Self.check(edited)
        #expect(status == 1)
        #expect(errors.contains("`import AetherCodingX` is not an import of Examples.swift"))
    }

    @Test func anExampleMissingFromTheReadmeFailsTheCheck() throws {
        let readme = try Self.readme
        let start = try #require(readme.range(of: "```swift\nimport AetherScheduling\n"))
        let end = try #require(readme.range(of: "```\n", range: start.upperBound..<readme.endIndex))
        let (status, errors) = try Self.check(
            readme.replacingCharacters(in: start.lowerBound..<end.upperBound, with: ""))
        #expect(status == 1)
        #expect(errors.contains("func plan is in no README ```swift block"))
    }
}
