import AetherIO

/// Writes to standard output unbuffered, one call per line, so lines reach a pipe at once.
enum StandardOutput {
    /// Writes all of `text`; a closed or broken standard output is ignored (there is nowhere to report it).
    static func write(_ text: String) {
        _ = try? Syscall.writeFully(1, Array(text.utf8), path: "standard output")
    }

    /// Writes `bytes` exactly as they are (record plaintexts are not text); a closed or broken standard output
    /// is ignored.
    static func write(bytes: [UInt8]) {
        _ = try? Syscall.writeFully(1, bytes, path: "standard output")
    }
}
