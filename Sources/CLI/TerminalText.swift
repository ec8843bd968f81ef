/// Text from outside the program (file names, URLs, a destination's answers, messages that quote them) made safe to
/// show on a terminal: control characters would otherwise reach it as they are, so that a file named with an escape
/// sequence retitles the window, recolours the screen or rewrites the lines above when `aether status` lists it.
/// C0 controls, DEL, C1 controls and the bidirectional overrides (which reorder what is shown) are written as
/// escapes (`\x1b`, `\n`, `\u{202e}`); everything else, any script included, is kept.
enum TerminalText {
    /// `text` with its controls escaped; `keepingLineBreaks` keeps `\n` and `\t` (for messages of several lines).
    static func safe(_ text: String, keepingLineBreaks: Bool = false) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if keepingLineBreaks, value == 0x0A || value == 0x09 {
                out.append(scalar)
            } else if value == 0x0A {
                out.append(contentsOf: "\\n".unicodeScalars)
            } else if value == 0x09 {
                out.append(contentsOf: "\\t".unicodeScalars)
            } else if value < 0x20 || (0x7F...0x9F).contains(value) {
                let hex = String(value, radix: 16)
                out.append(contentsOf: ("\\x" + (hex.count < 2 ? "0" : "") + hex).unicodeScalars)
            } else if (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value) {
                out.append(contentsOf: "\\u{\(String(value, radix: 16))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}
