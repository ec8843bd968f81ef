/// A small, strict command-line parser: `--name value` options, `--flag` switches and positionals.
/// Unknown options and missing values are usage errors, never ignored.
struct Arguments {
    /// A command-line mistake, reported with the command's usage.
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var positionals: [String] = []
    private var options: [String: String] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments`; `options` take a value, `flags` do not.
    init(_ arguments: [String], options: Set<String> = [], flags: Set<String> = []) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if onlyPositionals || !word.hasPrefix("--") || word == "-" {
                positionals.append(word)
                continue
            }
            if word == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(word.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
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

    /// The value of `--name`, if given.
    func option(_ name: String) -> String? { options[name] }

    /// Whether `--name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name` as an integer within `range`, or `defaultValue` when absent.
    func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let text = options[name] else { return defaultValue }
        guard let value = Self.parseSize(text), range.contains(value) else {
            throw UsageError(description: "--\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// Exactly `count` positionals, named for the error message.
    func positionals(exactly count: Int, names: String) throws(UsageError) -> [String] {
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
}
