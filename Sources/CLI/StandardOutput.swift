import Glibc

/// Writes to standard output unbuffered, one call per line, so lines reach a pipe at once.
enum StandardOutput {
    static func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = unsafe bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return unsafe Glibc.write(1, base + offset, raw.count - offset)
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
