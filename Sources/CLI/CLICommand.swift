/// One subcommand of `aether`. Each lives in its own file and is listed in `AetherCLI.commands`.
protocol CLICommand: SendableMetatype {
    /// The word that selects the command (`digest`, `ec`, `session` ...).
    static var name: String { get }
    /// One line for `aether help`.
    static var summary: String { get }
    /// The full usage text.
    static var usage: String { get }
    /// Runs the command with the arguments after its name; returns the process exit status.
    static func run(_ arguments: [Word]) async throws -> Int32
}

/// The exit statuses of `aether`.
enum ExitStatus {
    /// Success.
    static let success: Int32 = 0
    /// The command ran and found a problem (verification failed, file changed ...).
    static let failure: Int32 = 1
    /// The command line was wrong.
    static let usage: Int32 = 2
}
