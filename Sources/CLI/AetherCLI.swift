#if canImport(Glibc)
    import Glibc
#endif

/// The `aether` command-line tool.
@main
struct AetherCLI {
    /// Every subcommand, in the order `aether help` lists them.
    static let commands: [any CLICommand.Type] = [
        DigestCommand.self,
        VerifyCommand.self,
        ECCommand.self,
        SessionCommand.self,
        PinCommand.self,
        HelpCommand.self,
    ]

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first, let command = commands.first(where: { $0.name == name }) else {
            StandardError.write(HelpCommand.overview)
            exit(ExitStatus.usage)
        }
        do {
            exit(try await command.run(Array(arguments.dropFirst())))
        } catch let error as Arguments.UsageError {
            StandardError.write("aether \(name): \(error.description)\n\n\(command.usage)\n")
            exit(ExitStatus.usage)
        } catch {
            StandardError.write("aether \(name): \(error)\n")
            exit(ExitStatus.failure)
        }
    }
}

/// `aether help [COMMAND]`
enum HelpCommand: CLICommand {
    static let name = "help"
    static let summary = "show the commands, or one command's usage"
    static let usage = "usage: aether help [COMMAND]"

    static var overview: String {
        var text = "usage: aether COMMAND [ARGUMENTS]\n\ncommands:\n"
        for command in AetherCLI.commands {
            text +=
                "  " + command.name + String(repeating: " ", count: max(1, 10 - command.name.count)) + command.summary
                + "\n"
        }
        return text
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let parsed = try Arguments(arguments)
        if let name = parsed.positionals.first {
            guard let command = AetherCLI.commands.first(where: { $0.name == name }) else {
                throw Arguments.UsageError(description: "no command named \(name)")
            }
            print(command.usage)
        } else {
            print(overview, terminator: "")
        }
        return ExitStatus.success
    }
}

/// Writes to standard error.
enum StandardError {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        unsafe bytes.withUnsafeMutableBytes { raw in
            _ = unsafe Glibc.write(2, raw.baseAddress, raw.count)
        }
    }
}
