import Foundation
import Testing

/// The command-line rules of `aether`, for every command and subcommand, run as an operator runs them:
/// `-h`/`--help` print usage and exit 0 (and do nothing else), unknown arguments and malformed values
/// exit 2, failures exit 1 with one line.
@Suite struct CommandLineLiveTests {
    /// Every command and subcommand, as the words that select it.
    static let commands: [[String]] = [
        [], ["digest"], ["verify"], ["ec"], ["ec", "encode"], ["ec", "decode"], ["session"], ["session", "pair"],
        ["session", "host"], ["session", "connect"], ["session", "retire"], ["session", "refuse"], ["pin"],
        ["pin", "verify-update"], ["help"],
    ]

    @Test(arguments: commands)
    func helpPrintsUsageAndExitsZeroWithoutRunningTheCommand(command: [String]) throws {
        for flag in ["-h", "--help"] {
            // Extra words after the flag must not matter; `session host -h` must not start a listener
            // (the 20 s limit of runAether would catch one).
            let (status, output, error) = try SessionLive.runAether(command + [flag])
            #expect(status == 0, "aether \(command) \(flag): \(error)")
            #expect(output.hasPrefix("usage: aether"), "aether \(command) \(flag)")
            #expect(error.isEmpty)
        }
    }

    @Test func helpAfterDoubleDashIsAnArgumentNotARequestForHelp() throws {
        let (status, _, error) = try SessionLive.runAether(["digest", "--", "-h"])
        #expect(status == 1)
        #expect(error.contains("-h"))
    }

    /// A command line of each command that is valid apart from one unknown option.
    static let unknownOptions: [[String]] = [
        ["digest", "F", "--frobnicate"], ["verify", "F", "M", "--frobnicate"],
        [
            "ec", "encode", "--data", "2",
            "--parity", "1", "F", "D", "--frobnicate",
        ], ["ec", "decode", "D", "F", "--frobnicate"],
        ["session", "pair", "--host-id", "00", "--frobnicate"], ["session", "host", "--frobnicate"],
        ["session", "connect", "127.0.0.1:1", "--frobnicate"], ["session", "retire", "--key-id", "00", "-x"],
        ["session", "refuse", "--key-id", "00", "--frobnicate"], ["pin", "C", "--frobnicate"],
        ["pin", "verify-update", "P", "--key", "K", "--frobnicate"], ["help", "--frobnicate"], ["frobnicate"],
        ["ec", "frobnicate"], ["session", "frobnicate"],
    ]

    @Test(arguments: unknownOptions)
    func anUnknownOptionOrCommandExitsTwo(arguments: [String]) throws {
        let (status, _, error) = try SessionLive.runAether(arguments)
        #expect(status == 2, "aether \(arguments): \(error)")
        #expect(error.contains("usage:"))
    }

    /// A command line of each command with one positional too many.
    static let extraPositionals: [[String]] = [
        ["digest", "F", "X"], ["verify", "F", "M", "X"],
        ["ec", "encode", "--data", "2", "--parity", "1", "F", "D", "X"],
        ["ec", "decode", "D", "F", "X"], ["session", "pair", "X", "--host-id", "00"], ["session", "host", "X"],
        ["session", "connect", "127.0.0.1:1", "X"], ["session", "retire", "X", "--key-id", "00"],
        ["session", "refuse", "X", "--key-id", "00"], ["pin", "verify-update", "P", "X", "--key", "K"],
        ["help", "digest", "X"],
    ]

    @Test(arguments: extraPositionals)
    func anExtraArgumentExitsTwo(arguments: [String]) throws {
        let (status, _, error) = try SessionLive.runAether(arguments)
        #expect(status == 2, "aether \(arguments): \(error)")
        #expect(error.contains("unexpected argument X"))
    }

    /// A command line of each command with one malformed option value.
    static let malformedValues: [[String]] = [
        ["digest", "F", "--chunk-size", "lots"], ["digest", "F", "--chunk-size", "1"],
        [
            "digest", "F", "--strategy",
            "mmap",
        ], ["ec", "encode", "--data", "0", "--parity", "1", "F", "D"],
        [
            "ec", "decode", "D", "F",
            "--expect-sha256", "xyz",
        ], ["session", "pair", "--host-id", "not-hex"], ["session", "host", "--port", "70000"],
        ["session", "host", "--bind", "not-an-address"], ["session", "host", "--clock-skew-ms", "soon"],
        ["session", "connect", "nowhere"], ["session", "connect", "127.0.0.1:1", "--host-id", "zz"],
        ["session", "retire", "--key-id", "zz"], ["session", "refuse", "--key-id", "zz"],
    ]

    @Test(arguments: malformedValues)
    func aMalformedValueExitsTwoNotOne(arguments: [String]) throws {
        let (status, _, error) = try SessionLive.runAether(arguments)
        #expect(status == 2, "aether \(arguments): \(error)")
    }

    @Test func aFailureExitsOneWithOneLineNamingTheCauseAndTheNextStep() throws {
        let missing = "/nonexistent-\(UUID().uuidString)"
        let (status, _, error) = try SessionLive.runAether(["digest", missing])
        #expect(status == 1)
        let lines = error.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(error.contains(missing) && error.contains("check the path"))
    }

    @Test func hostRefusesAStateDirectoryThatDoesNotExist() throws {
        let (status, _, error) = try SessionLive.runAether([
            "session", "host", "--port", "0", "--state-dir", "/nonexistent-\(UUID().uuidString)",
        ])
        // A --state-dir that is not a directory is a wrong command line.
        #expect(status == 2)
        #expect(error.contains("not an existing directory"))
    }
}
