import Foundation
import Testing

/// `scripts/check-layering.py` itself, fed fake `swift package describe --type json` outputs: it must fail on
/// each kind of violation and list the phases in layer order, with the receiver before the Uploader.
@Suite struct LayeringCheckTests {
    /// One target of a fake package: name, type and target dependencies.
    typealias Target = (name: String, type: String, dependencies: [String])

    /// The package as it is layered today (C wrappers included).
    static let layered: [Target] = [
        ("CAetherOpenSSL", "system-target", []), ("CAetherKernels", "library", []),
        ("AetherIO", "library", ["CAetherOpenSSL", "CAetherKernels"]), ("AetherIntegrity", "library", ["AetherIO"]),
        ("AetherCoding", "library", ["AetherIO", "CAetherKernels"]), ("AetherScheduling", "library", []),
        ("AetherSecurity", "library", ["AetherIO", "AetherIntegrity"]),
        ("AetherTransport", "library", ["AetherIO", "AetherSecurity"]),
        ("AetherUploader", "library", ["AetherTransport", "AetherScheduling", "AetherCoding"]),
        ("aether", "executable", ["AetherTransport", "AetherUploader"]),
        ("AetherIOTests", "test", ["AetherIO"]),
    ]

    /// Runs the checker on `targets` (in `swift package describe` order: reversed, as SwiftPM prints them).
    static func check(_ targets: [Target], _ arguments: [String] = []) throws -> (Int32, String, String) {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json: [String: Any] = [
            "name": "Aether",
            "targets": targets.reversed().map { target -> [String: Any] in
                var entry: [String: Any] = ["name": target.name, "type": target.type]
                if !target.dependencies.isEmpty { entry["target_dependencies"] = target.dependencies }
                return entry
            },
        ]
        let file = directory + "/describe.json"
        // The real command prints a warning line or two before the JSON; the checker must skip it.
        var data = Data("warning: 'aether': found 1 file(s) which are unhandled\n".utf8)
        data.append(try JSONSerialization.data(withJSONObject: json))
        try data.write(to: URL(fileURLWithPath: file))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", PythonPeer.packageRoot.appendingPathComponent("scripts/check-layering.py").path]
            + ["--describe-json", file] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)
        )
    }

    /// `layered` with `name`'s dependencies replaced, or a target added when `name` is new.
    static func with(_ name: String, type: String = "library", dependencies: [String]) -> [Target] {
        var targets = layered.filter { $0.name != name }
        targets.append((name, type, dependencies))
        return targets
    }

    @Test func theLayeredPackagePasses() throws {
        let (status, out, err) = try Self.check(Self.layered)
        #expect(status == 0, "\(err)")
        #expect(out.contains("7 modules checked"))
    }

    @Test(arguments: [
        (
            "AetherIntegrity", ["AetherIO", "AetherSecurity"],
            "AetherIntegrity (layer 2) depends on AetherSecurity (layer 5)"
        ),
        ("AetherIO", ["AetherIntegrity"], "AetherIO (layer 1) depends on AetherIntegrity (layer 2)"),
        ("AetherCoding", ["AetherIO", "AetherCoding2"], "AetherCoding depends on AetherCoding2, which is neither"),
        ("AetherScheduling", ["AetherScheduling"], "AetherScheduling (layer 4) depends on AetherScheduling (layer 4)"),
        ("AetherTransport", ["AetherSecurity", "aether"], "AetherTransport depends on aether, which is neither"),
        ("CAetherKernels", ["AetherIO"], "C wrapper CAetherKernels depends on Swift module AetherIO"),
    ])
    func aDependencyOnTheSameOrAHigherLayerFails(target: String, dependencies: [String], message: String) throws {
        let (status, _, err) = try Self.check(Self.with(target, dependencies: dependencies))
        #expect(status == 1)
        #expect(err.contains("layering: " + message))
    }

    @Test func aLibraryWithoutALayerFails() throws {
        let (status, _, err) = try Self.check(Self.with("AetherExtras", dependencies: ["AetherIO"]))
        #expect(status == 1)
        #expect(err.contains("library target AetherExtras has no layer"))
    }

    @Test func theToolingModuleHasNoLayerUsesCWrappersOnlyAndNoLayerMayUseIt() throws {
        let tooling = Self.with("AetherTestSupport", dependencies: ["AetherIO"])
        let clean = try Self.check(tooling)
        #expect(clean.0 == 0, "\(clean.2)")
        let phases = try Self.check(tooling, ["--phases"])
        #expect(!phases.1.contains("AetherTestSupport"))
        let upward = try Self.check(Self.with("AetherTestSupport", dependencies: ["AetherIO", "AetherTransport"]))
        #expect(upward.0 == 1)
        #expect(upward.2.contains("tooling module AetherTestSupport depends on AetherTransport"))
        var used = tooling.filter { $0.name != "AetherTransport" }
        used.append(("AetherTransport", "library", ["AetherSecurity", "AetherTestSupport"]))
        let downward = try Self.check(used)
        #expect(downward.0 == 1)
        #expect(downward.2.contains("AetherTransport depends on AetherTestSupport, which is neither"))
    }

    @Test func theLinkLabMayUseAetherIOButNoOtherLayerAndNoLayerMayUseIt() throws {
        let clean = try Self.check(Self.with("AetherLinkLab", dependencies: ["AetherIO"]))
        #expect(clean.0 == 0, "\(clean.2)")
        let phases = try Self.check(Self.with("AetherLinkLab", dependencies: ["AetherIO"]), ["--phases"])
        #expect(!phases.1.contains("AetherLinkLab"))
        let upward = try Self.check(Self.with("AetherLinkLab", dependencies: ["AetherIO", "AetherTransport"]))
        #expect(upward.0 == 1)
        #expect(
            upward.2.contains(
                "tooling module AetherLinkLab depends on AetherTransport; it may use C wrappers and AetherIO"))
        var used = Self.with("AetherLinkLab", dependencies: ["AetherIO"]).filter { $0.name != "AetherUploader" }
        used.append(("AetherUploader", "library", ["AetherTransport", "AetherLinkLab"]))
        let downward = try Self.check(used)
        #expect(downward.0 == 1)
        #expect(downward.2.contains("AetherUploader depends on AetherLinkLab, which is neither"))
    }

    @Test func theReceiverMayNotReachTheUploaderDirectlyOrThroughAnotherModule() throws {
        let direct = try Self.check(Self.with("AetherReceiver", dependencies: ["AetherTransport", "AetherUploader"]))
        #expect(direct.0 == 1)
        #expect(direct.2.contains("AetherReceiver (layer 7) depends on AetherUploader (layer 7)"))
        #expect(direct.2.contains("AetherReceiver reaches AetherUploader"))
        // Through a lower layer that (wrongly) depends on the Uploader: both violations are named.
        var targets = Self.with("AetherReceiver", dependencies: ["AetherTransport"])
        targets =
            targets.filter { $0.name != "AetherTransport" } + [
                ("AetherTransport", "library", ["AetherSecurity", "AetherUploader"])
            ]
        let through = try Self.check(targets)
        #expect(through.0 == 1)
        #expect(through.2.contains("AetherTransport (layer 6) depends on AetherUploader (layer 7)"))
        #expect(through.2.contains("AetherReceiver reaches AetherUploader"))
        // On layers 1-6 only, it passes.
        let clean = try Self.check(Self.with("AetherReceiver", dependencies: ["AetherTransport", "AetherCoding"]))
        #expect(clean.0 == 0, "\(clean.2)")
        #expect(clean.1.contains("8 modules checked"))
    }

    /// A backend declares what it offers once (`features`); a cast to a backend type in the Uploader's sources fails
    /// the check with its file and line, a comment that names one does not, and the project's own sources pass.
    @Test func aCastToABackendTypeInTheUploaderFailsWithItsLine() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/Engine", withIntermediateDirectories: true)
        let source = """
            let native = backend.features.native
            // not `backend as? NativeBackend`: the features say it
            let runs = backend as? any RunSendingBackend
            if sender is S3Backend { return }
            """
        try Data(source.utf8).write(to: URL(fileURLWithPath: directory + "/Engine/Sending.swift"))
        let (status, _, err) = try Self.check(Self.layered, ["--uploader-sources", directory])
        #expect(status == 1)
        #expect(
            err.contains("Engine/Sending.swift:3: casts to RunSendingBackend (as? any RunSendingBackend)"), "\(err)")
        #expect(err.contains("Engine/Sending.swift:4: casts to S3Backend (is S3Backend)"), "\(err)")
        #expect(!err.contains("Sending.swift:2"))
        let project = PythonPeer.packageRoot.appendingPathComponent("Sources/Uploader").path
        let clean = try Self.check(Self.layered, ["--uploader-sources", project])
        #expect(clean.0 == 0, "\(clean.2)")
        #expect(clean.1.contains("the Uploader casts to no backend type"))
    }

    @Test func phasesFollowTheLayersAndTakeTheReceiverBeforeTheUploaderWhenItExists() throws {
        let base = [
            "AetherIO", "AetherIntegrity", "AetherCoding", "AetherScheduling", "AetherSecurity", "AetherTransport",
        ]
        let today = try Self.check(Self.layered, ["--phases"])
        #expect(today.0 == 0)
        #expect(today.1.split(separator: "\n").map(String.init) == base + ["AetherUploader"])
        let withReceiver = try Self.check(
            Self.with("AetherReceiver", dependencies: ["AetherTransport"]), ["--phases"])
        #expect(withReceiver.1.split(separator: "\n").map(String.init) == base + ["AetherReceiver", "AetherUploader"])
    }
}
