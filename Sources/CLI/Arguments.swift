import AetherIO

/// A small, strict command-line parser: `--name value` options, `--flag` switches and positionals.
/// Unknown options, single-dash words, missing values and positionals beyond what the command takes
/// are usage errors (exit 2), never ignored. `--` ends the options (so a file may be named `-x`).
/// `-h`/`--help` never get here: `AetherCLI` answers them for every command before it runs.
struct Arguments {
    /// A command-line mistake, reported with the command's usage (exit 2).
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var positionals: [Word] = []
    private var options: [String: Word] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments`; `options` take a value, `flags` do not; at most `positionals.upperBound`
    /// positionals are accepted.
    init(
        _ arguments: [Word], options: Set<String> = [], flags: Set<String> = [], positionals: ClosedRange<Int> = 0...0
    ) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let word = arguments[index]
            let text = word.text
            index += 1
            if onlyPositionals || !text.hasPrefix("-") || text == "-" {
                guard self.positionals.count < positionals.upperBound else {
                    throw UsageError(description: "unexpected argument \(word)")
                }
                self.positionals.append(word)
                continue
            }
            if text == "--" {
                onlyPositionals = true
                continue
            }
            guard text.hasPrefix("--") else { throw UsageError(description: "unknown option \(word)") }
            var name = String(text.dropFirst(2))
            var inlineValue: Word?
            if let equals = word.path.bytes.firstIndex(of: UInt8(ascii: "=")) {
                inlineValue = Word(bytes: Array(word.path.bytes[(equals + 1)...]))
                name = String(decoding: word.path.bytes[2..<equals], as: UTF8.self)
            }
            if options.contains(name) {
                if let inlineValue {
                    self.options[name] = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError(description: "--\(name) needs a value") }
                    self.options[name] = arguments[index]
                    index += 1
                }
            } else if flags.contains(name), inlineValue == nil {
                self.flags.insert(name)
            } else {
                throw UsageError(description: "unknown option --\(name)")
            }
        }
    }

    /// The value of `--name` as text, if given.
    func option(_ name: String) -> String? { options[name]?.text }

    /// The value of `--name` as a path (the bytes as given), if given.
    func path(_ name: String) -> FilePath? { options[name]?.path }

    /// The value of `--name` converted by `parse`, if given; a value `parse` rejects is a usage error
    /// naming `expected`.
    func value<T>(_ name: String, expected: String, _ parse: (String) throws -> T) throws(UsageError) -> T? {
        guard let text = options[name]?.text else { return nil }
        do {
            return try parse(text)
        } catch {
            throw UsageError(description: "--\(name) must be \(expected)")
        }
    }

    /// Whether `--name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name` as an integer within `range`, or `defaultValue` when absent.
    func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let text = options[name]?.text else { return defaultValue }
        guard let value = Self.parseSize(text), range.contains(value) else {
            throw UsageError(description: "--\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// Exactly `count` positionals, named for the error message.
    func positionals(exactly count: Int, names: String) throws(UsageError) -> [Word] {
        guard positionals.count == count else { throw UsageError(description: "expected \(names)") }
        return positionals
    }

    /// Parses `123`, `64K`, `4M`, `1G` (binary multiples).
    static func parseSize(_ text: String) -> Int? {
        let multipliers: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = text.last, let multiplier = multipliers[Character(last.uppercased())] {
            guard let base = Int(text.dropLast()) else { return nil }
            let (product, overflow) = base.multipliedReportingOverflow(by: multiplier)
            return overflow ? nil : product
        }
        return Int(text)
    }

    /// Whether `arguments` ask for help: `-h` or `--help` before any `--`.
    static func asksForHelp(_ arguments: [Word]) -> Bool {
        for word in arguments {
            if word.text == "--" { return false }
            if word.text == "-h" || word.text == "--help" { return true }
        }
        return false
    }
}

/// One word of the command line as the bytes the shell passed (`argv`), so a file name that is not
/// UTF-8 reaches open(2) unchanged; `text` is the lossy form for option names and values.
struct Word: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The bytes, as a path.
    let path: FilePath

    init(bytes: [UInt8]) {
        // argv words are C strings: they hold no NUL, so this cannot fail.
        path = (try? FilePath(bytes: bytes)) ?? FilePath(String(decoding: bytes, as: UTF8.self))
    }

    init(stringLiteral value: String) { path = FilePath(value) }

    /// The word as text (invalid UTF-8 repaired; use `path` for file names).
    var text: String { String(decoding: path.bytes, as: UTF8.self) }

    /// The word for messages (lossless: non-UTF-8 bytes escaped).
    var description: String { path.description }
}
