import AetherIO

/// Writes to standard output unbuffered, one call per line, so lines reach a pipe at once.
enum StandardOutput {
    /// Writes all of `text` through `TerminalText` (line breaks kept: text quotes file names and destinations'
    /// answers), after `control` (the progress bar's line clearing) as it is; a closed or broken standard output is
    /// ignored (there is nowhere to report it).
    static func write(_ text: String, control: String = "") {
        _ = try? Syscall.writeFully(
            1, Array((control + TerminalText.safe(text, keepingLineBreaks: true)).utf8), path: "standard output")
    }

    /// Writes `bytes` exactly as they are (record plaintexts are not text); a closed or broken standard output
    /// is ignored.
    static func write(bytes: [UInt8]) {
        _ = try? Syscall.writeFully(1, bytes, path: "standard output")
    }
}
