import AetherIO
import Glibc

/// Standard input as byte lines, read through `Syscall.read`: no decoding, so every byte of a line reaches the
/// record as it was (docs/SECURE-SESSION.md section 6.2).
///
/// A line ends at `0x0A`, which is removed, and one `0x0D` right before it is removed too (`\r\n` endings).
/// A last line without `0x0A` is returned as it is (a lone trailing `0x0D` stays). Memory is bounded: a line
/// longer than `limit` bytes is an error, found before more than `limit` plus one read's bytes are held.
/// A standard input inherited in non-blocking mode is waited on with `poll`: EAGAIN is not the end of input.
struct StandardInputLines {
    private static let chunkSize = 16_384
    private let descriptor: Int32
    private let limit: Int
    private var pending: [UInt8] = []
    /// Where the first byte not yet returned sits in `pending`.
    private var start = 0
    private var ended = false
    private var lineNumber = 0

    /// Lines of `descriptor` (standard input by default), none longer than `limit` bytes.
    init(descriptor: Int32 = 0, limit: Int) {
        self.descriptor = descriptor
        self.limit = limit
    }

    /// The next line without its line ending, or nil at the end of input.
    mutating func next() throws -> [UInt8]? {
        // How far past `start` a previous pass already looked for `0x0A` (`fill` may move `start`).
        var scanned = 0
        while true {
            if let newline = pending[(start + scanned)...].firstIndex(of: 0x0A) {
                var end = newline
                if end > start, pending[end - 1] == 0x0D { end -= 1 }
                return try take(upTo: end, resumingAt: newline + 1)
            }
            if ended {
                guard start < pending.count else { return nil }
                return try take(upTo: pending.count, resumingAt: pending.count)
            }
            // Room for the line and the `\r` of its `\r\n`: anything beyond can no longer become a valid line.
            if pending.count - start > limit + 1 { throw tooLong(lineNumber + 1) }
            scanned = pending.count - start
            try fill()
        }
    }

    private mutating func take(upTo end: Int, resumingAt next: Int) throws -> [UInt8] {
        lineNumber += 1
        guard end - start <= limit else { throw tooLong(lineNumber) }
        let line = Array(pending[start..<end])
        start = next
        return line
    }

    /// Reads once more, first dropping the bytes already returned; a read of 0 bytes is the end of input.
    private mutating func fill() throws {
        if start > 0 {
            pending.removeFirst(start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
        var count = 0
        while true {
            do {
                count = try unsafe chunk.withUnsafeMutableBytes { buffer throws(IOError) in
                    try unsafe Syscall.read(descriptor, into: buffer, path: "standard input")
                }
                break
            } catch let error as IOError where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
                // A standard input inherited in non-blocking mode: wait for data rather than end early.
                _ = try Syscall.poll(
                    descriptor, events: Int16(POLLIN), timeoutMilliseconds: 1_000, path: "standard input")
            }
        }
        if count == 0 { ended = true }
        pending += chunk[0..<count]
    }

    private func tooLong(_ line: Int) -> SessionCommandError {
        SessionCommandError("line \(line) of standard input is longer than \(limit) bytes, the largest record")
    }
}
