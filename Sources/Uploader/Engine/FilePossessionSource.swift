public import AetherIO
public import AetherSecurity
import Synchronization

/// The local file as a `PossessionSource` for the proof-of-possession prover: reads at an offset through a
/// `GuardedFile` (opened `O_NONBLOCK`, regular files only), one read at a time.
public final class FilePossessionSource: PossessionSource {
    /// Length in bytes when it was opened.
    public let size: UInt64
    private let file: Mutex<GuardedFile>

    /// Opens `path` under the change guard.
    public init(path: FilePath) throws(IOError) {
        let guarded = try GuardedFile(path: path)
        size = UInt64(max(0, guarded.identity.size))
        file = Mutex(guarded)
    }

    /// Exactly `count` bytes at `offset`, read while the file is unchanged; a range outside the file or a short
    /// read is `.malformedMessage`, a failed read or a changed file `.systemCall` (never naming the bytes).
    public func read(offset: UInt64, count: Int) throws(SecurityError) -> [UInt8] {
        guard count >= 0, offset <= size, UInt64(count) <= size - offset else {
            throw SecurityError(.malformedMessage, "read of \(count) bytes at \(offset) is outside \(size) bytes")
        }
        let result = file.withLock { file -> Result<[UInt8], IOError> in
            var bytes = [UInt8](repeating: 0, count: count)
            let read = unsafe bytes.withUnsafeMutableBytes { raw in
                Result { () throws(IOError) -> Int in try unsafe file.read(at: Int64(offset), into: raw) }
            }
            return read.flatMap { got in
                Result { () throws(IOError) -> [UInt8] in
                    try file.verifyUnchanged()
                    return Array(bytes.prefix(got))
                }
            }
        }
        switch result {
        case .success(let bytes) where bytes.count == count: return bytes
        case .success: throw SecurityError(.malformedMessage, "the file ended before \(offset + UInt64(count)) bytes")
        case .failure(let error):
            throw SecurityError(.systemCall, "the file could not be read for a possession proof (\(error.code))")
        }
    }
}
